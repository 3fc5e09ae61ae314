package rec

import "net/http/httptest"

// Record calls methods of types from outside the repository only.
func Record() string {
	w := httptest.NewRecorder()
	w.Flush()
	return w.Body.String()
}
