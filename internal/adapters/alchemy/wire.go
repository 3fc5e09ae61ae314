package alchemy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// The shapes below keep only what the tools print: images, descriptions,
// token URIs and the raw metadata beyond its attributes are left out.

type openSea struct {
	FloorPrice            *float64 `json:"floorPrice"`
	CollectionName        string   `json:"collectionName"`
	CollectionSlug        string   `json:"collectionSlug"`
	SafelistRequestStatus string   `json:"safelistRequestStatus"`
	LastIngestedAt        string   `json:"lastIngestedAt"`
}

type contract struct {
	Address             string  `json:"address"`
	Name                string  `json:"name"`
	Symbol              string  `json:"symbol"`
	TotalSupply         string  `json:"totalSupply"`
	TokenType           string  `json:"tokenType"`
	ContractDeployer    string  `json:"contractDeployer"`
	DeployedBlockNumber *int64  `json:"deployedBlockNumber"`
	OpenSea             openSea `json:"openSeaMetadata"`
	IsSpam              *bool   `json:"isSpam"`
}

// collectionName prefers OpenSea's name, which is what people call it.
func (c contract) collectionName() string {
	if c.OpenSea.CollectionName != "" {
		return c.OpenSea.CollectionName
	}
	return c.Name
}

func (c contract) spam() any {
	if c.IsSpam == nil {
		return nil
	}
	return *c.IsSpam
}

type nftItem struct {
	Contract        contract `json:"contract"`
	TokenID         string   `json:"tokenId"`
	TokenType       string   `json:"tokenType"`
	Name            string   `json:"name"`
	Balance         string   `json:"balance"`
	TimeLastUpdated string   `json:"timeLastUpdated"`
	Raw             struct {
		Metadata struct {
			Attributes json.RawMessage `json:"attributes"`
		} `json:"metadata"`
	} `json:"raw"`
	Mint struct {
		Timestamp string `json:"timestamp"`
	} `json:"mint"`
	AcquiredAt struct {
		BlockTimestamp string `json:"blockTimestamp"`
	} `json:"acquiredAt"`
}

type ownedPage struct {
	OwnedNFTs  []nftItem `json:"ownedNfts"`
	TotalCount *int64    `json:"totalCount"`
	PageKey    string    `json:"pageKey"`
}

// attributes flattens the metadata's traits to "type=value; …". Metadata is
// whatever the token's creator wrote, so anything but a list of objects is
// skipped rather than refused.
func attributes(raw json.RawMessage) string {
	var list []struct {
		TraitType any `json:"trait_type"`
		Value     any `json:"value"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	parts := make([]string, 0, len(list))
	for _, a := range list {
		if a.Value == nil {
			continue
		}
		if a.TraitType == nil {
			parts = append(parts, fmt.Sprint(a.Value))
			continue
		}
		parts = append(parts, fmt.Sprintf("%v=%v", a.TraitType, a.Value))
	}
	return adapters.Clip(strings.Join(parts, "; "), maxAttributes)
}

// The DAS answer of Solana's getAssetsByOwner and getAsset.

type dasAsset struct {
	ID        string `json:"id"`
	Interface string `json:"interface"`
	Content   struct {
		Metadata struct {
			Name       string          `json:"name"`
			Symbol     string          `json:"symbol"`
			Attributes json.RawMessage `json:"attributes"`
		} `json:"metadata"`
	} `json:"content"`
	Grouping []struct {
		GroupKey   string `json:"group_key"`
		GroupValue string `json:"group_value"`
	} `json:"grouping"`
	Compression struct {
		Compressed bool `json:"compressed"`
	} `json:"compression"`
	Ownership struct {
		Owner string `json:"owner"`
	} `json:"ownership"`
}

func (a dasAsset) collection() string {
	for _, g := range a.Grouping {
		if g.GroupKey == "collection" {
			return g.GroupValue
		}
	}
	return ""
}

type dasPage struct {
	Total int        `json:"total"`
	Limit int        `json:"limit"`
	Page  int        `json:"page"`
	Items []dasAsset `json:"items"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const (
	maxName       = 100
	maxAttributes = 600
)
