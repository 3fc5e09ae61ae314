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

// Use reads the rows of a query; q's type is the result of Conn.Query.
func Use(c *mods.Conn) bool {
	q := c.Query()
	return q.Next()
}
