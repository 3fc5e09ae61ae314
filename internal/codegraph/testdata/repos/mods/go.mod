module example.com/mods/v2

go 1.22
