package sub

import (
	"example.com/mods/v2"
	"example.com/mods/v2/go-kit"
)

// Open connects through the root package.
func Open() *mods.Conn {
	_ = kit.Make()
	return mods.Connect("db")
}
