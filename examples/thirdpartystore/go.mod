module example.com/thirdpartystore

go 1.26.0

require github.com/hookinbox/webhooks v0.0.0

replace github.com/hookinbox/webhooks => ../..
