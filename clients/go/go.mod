module promptd.local/client

go 1.26.8
