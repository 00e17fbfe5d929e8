module promptd.local/client

go 1.24
