module example.com/go-host

go 1.24

require github.com/promptd/promptd/clients/go v0.0.0-00010101000000-000000000000

// The client is not published yet: use the checkout's copy.
replace github.com/promptd/promptd/clients/go => ../../clients/go
