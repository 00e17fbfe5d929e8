module github.com/promptd/promptd/clients/go

go 1.24
