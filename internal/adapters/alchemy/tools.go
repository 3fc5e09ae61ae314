package alchemy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

var (
	evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	ensName    = regexp.MustCompile(`^([a-z0-9-]+\.)+eth$`)
	tokenID    = regexp.MustCompile(`^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$`)
	pageKeyRe  = regexp.MustCompile(`^[A-Za-z0-9_:=+/.-]{1,512}$`)
)

func evmContract(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if !evmAddress.MatchString(s) {
		return "", fmt.Errorf("contract %q is not an EVM address (0x and 40 hex digits)", raw)
	}
	return s, nil
}

func holdings(ctx context.Context, c adapters.Conn, key string, in args) (string, error) {
	ch, err := chainOf(in.Chain)
	if err != nil {
		return "", err
	}
	n := adapters.Rows(in.Limit)
	pageKey := strings.TrimSpace(in.PageKey)
	if pageKey != "" && !pageKeyRe.MatchString(pageKey) {
		return "", fmt.Errorf("page_key %q is not one this tool returned", in.PageKey)
	}
	if ch == solana {
		return solanaHoldings(ctx, c, key, in, n, pageKey)
	}
	owner := strings.TrimSpace(in.Owner)
	switch {
	case evmAddress.MatchString(owner):
	case ensName.MatchString(strings.ToLower(owner)) && ch == ethereum:
		owner = strings.ToLower(owner)
	case ensName.MatchString(strings.ToLower(owner)):
		return "", fmt.Errorf("ENS names resolve on ethereum only: pass %s's 0x address for %s", owner, ch.name)
	default:
		return "", fmt.Errorf("owner %q is not an EVM address or ENS name", in.Owner)
	}
	// The page size is the row count, so the next page key continues right
	// after the last row shown.
	q := url.Values{"owner": {owner}, "pageSize": {strconv.Itoa(n)}, "withMetadata": {"true"}}
	if in.Contract != "" {
		addr, err := evmContract(in.Contract)
		if err != nil {
			return "", err
		}
		q.Set("contractAddresses[]", addr)
	}
	if pageKey != "" {
		q.Set("pageKey", pageKey)
	}
	var page ownedPage
	if err := getNFT(ctx, c, key, ch, "getNFTsForOwner", q, &page); err != nil {
		return "", err
	}
	t := adapters.NewTable("contract", "token_id", "type", "balance", "name", "collection", "floor", "acquired", "spam")
	items := page.OwnedNFTs
	if len(items) > n {
		items = items[:n]
	}
	for _, it := range items {
		t.Add(it.Contract.Address, it.TokenID, it.TokenType, it.Balance, adapters.Clip(it.Name, maxName),
			adapters.Clip(it.Contract.collectionName(), maxName), it.Contract.OpenSea.FloorPrice, it.AcquiredAt.BlockTimestamp, it.Contract.spam())
	}
	return t.String() + footer(page.TotalCount, page.PageKey), nil
}

// footer follows a list with its total and the key of its next page, if any.
func footer(total *int64, next string) string {
	var b strings.Builder
	if total != nil || next != "" {
		b.WriteByte('\n')
	}
	if total != nil {
		fmt.Fprintf(&b, "total\t%d\n", *total)
	}
	if next != "" {
		fmt.Fprintf(&b, "next_page_key\t%s\n", next)
	}
	return b.String()
}

func nft(ctx context.Context, c adapters.Conn, key string, in args) (string, error) {
	ch, err := chainOf(in.Chain)
	if err != nil {
		return "", err
	}
	if ch == solana {
		return solanaAsset(ctx, c, key, in)
	}
	addr, err := evmContract(in.Contract)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(in.TokenID)
	if !tokenID.MatchString(id) {
		return "", fmt.Errorf("token_id %q is not a decimal or 0x hex token id", in.TokenID)
	}
	var it nftItem
	q := url.Values{"contractAddress": {addr}, "tokenId": {id}}
	if err := getNFT(ctx, c, key, ch, "getNFTMetadata", q, &it); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("contract", "token_id", "type", "name", "collection", "symbol", "floor", "total_supply", "minted", "updated", "attributes")
	t.Add(it.Contract.Address, it.TokenID, it.TokenType, adapters.Clip(it.Name, maxName), adapters.Clip(it.Contract.collectionName(), maxName),
		it.Contract.Symbol, it.Contract.OpenSea.FloorPrice, it.Contract.TotalSupply, it.Mint.Timestamp, it.TimeLastUpdated,
		attributes(it.Raw.Metadata.Attributes))
	return t.String(), nil
}

func collection(ctx context.Context, c adapters.Conn, key string, in args) (string, error) {
	ch, err := chainOf(in.Chain)
	if err != nil {
		return "", err
	}
	if ch == solana {
		return "", errors.New("collection covers the EVM chains; on solana, ask nft with the collection's mint as contract")
	}
	addr, err := evmContract(in.Contract)
	if err != nil {
		return "", err
	}
	var ct contract
	if err := getNFT(ctx, c, key, ch, "getContractMetadata", url.Values{"contractAddress": {addr}}, &ct); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("contract", "name", "collection", "slug", "symbol", "type", "total_supply", "floor", "floor_seen", "safelist", "deployer", "deployed_block")
	var block any
	if ct.DeployedBlockNumber != nil {
		block = *ct.DeployedBlockNumber
	}
	t.Add(ct.Address, adapters.Clip(ct.Name, maxName), adapters.Clip(ct.OpenSea.CollectionName, maxName), ct.OpenSea.CollectionSlug, ct.Symbol, ct.TokenType,
		ct.TotalSupply, ct.OpenSea.FloorPrice, ct.OpenSea.LastIngestedAt, ct.OpenSea.SafelistRequestStatus, ct.ContractDeployer, block)
	return t.String(), nil
}

// notFound adds what to check to a 400 or 404 about one token or contract.
func notFound(err error) error {
	var he *adapters.HTTPError
	if errors.As(err, &he) && (he.Status == 400 || he.Status == 404) {
		return fmt.Errorf("%w (check the chain, the contract and the token id)", err)
	}
	return err
}
