package store

import "errors"

// ErrMissing is returned for an absent key.
var ErrMissing = errors.New("missing")

const MaxKeys = 100

// Store keeps values by key.
type Store struct {
	items map[string]string
}

// Getter reads values.
type Getter interface {
	Get(key string) (string, error)
}

// New returns an empty store.
func New() *Store {
	return &Store{items: map[string]string{}}
}

// Get returns the value of key.
func (s *Store) Get(key string) (string, error) {
	v, ok := s.items[key]
	if !ok {
		return "", ErrMissing
	}
	return v, nil
}

func (s *Store) Put(key,
	value string) {
	s.items[key] = value
}
