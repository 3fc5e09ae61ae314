package wallet

import (
	"context"
	"errors"
)

var errNotYet = errors.New("this Wallet tool is not built into this platform yet; nothing was signed or sent")

func openseaList(context.Context, *call, args) (string, error) { return "", errNotYet }
func openseaCollectionOffer(context.Context, *call, args) (string, error) {
	return "", errNotYet
}
