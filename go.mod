module github.com/hookinbox/webhooks

go 1.26
