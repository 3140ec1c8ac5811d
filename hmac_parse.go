package webhooks

import "github.com/hookinbox/webhooks/internal/wire"

// parseSignatureHeader reads a signature header value in format f and
// turns a fault into a rejection: ReasonMissingSignature when no signature
// was sent, ReasonMalformedHeader otherwise. headerName is used in the
// detail only, which never contains the value.
func parseSignatureHeader(f *wire.SignatureFormat, value, headerName string) (wire.Signatures, *VerificationError) {
	sigs, fault := f.Parse(value)
	switch {
	case fault == wire.NoFault:
		return sigs, nil
	case fault.Missing():
		return wire.Signatures{}, Reject(ReasonMissingSignature, "%s", f.Detail(fault, headerName))
	}
	return wire.Signatures{}, Reject(ReasonMalformedHeader, "%s", f.Detail(fault, headerName))
}
