module example.com/poly

go 1.22
