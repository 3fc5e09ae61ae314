package alchemy_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const (
	goodKey   = "alcht_5ecr3tKey0001"
	baycAddr  = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"
	ownerAddr = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
	solOwner  = "86xCnPeV69n6t3DnyGvkKobf9FdN2H9oiVDdaMpo2MMY"
	solMint   = "JCfTS6dmJZY4NXhjMwHqayGGHUwxp59pzcYhZrYqMBce"
)

// service is a fake Alchemy speaking the NFT API v3 and Solana DAS wire
// formats. The key is a path segment; an unknown key is a 401. Ink is not
// enabled on the key's app (a 403 naming the network), as Alchemy answers
// for a network the dashboard has switched off.
type service struct {
	*httptest.Server

	mu       sync.Mutex
	requests []seen
}

type seen struct {
	Host, Method, Path string
	Query              url.Values
	Body               string
}

func newService(t testing.TB, tlsOn bool) *service {
	s := &service{}
	if tlsOn {
		s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	} else {
		s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	}
	t.Cleanup(s.Close)
	return s
}

// client sends every request, whatever its host, to this server, so the
// adapter's real per-chain hosts are kept in the Host header for the fake to
// check.
func (s *service) client() *http.Client {
	addr := s.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
}

func (s *service) last() seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return seen{}
	}
	return s.requests[len(s.requests)-1]
}

func (s *service) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func raw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (s *service) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, seen{Host: r.Host, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)})
	s.mu.Unlock()

	path := strings.TrimPrefix(r.URL.Path, "/nft/v3")
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v2/"); ok && r.Method == http.MethodPost {
		if rest != goodKey {
			raw(w, http.StatusUnauthorized, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Must be authenticated!"}}`)
			return
		}
		dasAnswer(w, body)
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) != 2 {
		raw(w, http.StatusNotFound, `{"error":{"message":"Not found"}}`)
		return
	}
	if parts[0] != goodKey {
		raw(w, http.StatusUnauthorized, `{"error":{"message":"Must be authenticated!"}}`)
		return
	}
	if strings.HasPrefix(r.Host, "ink-mainnet.") {
		raw(w, http.StatusForbidden, `{"error":{"message":"INK_MAINNET is not enabled for this app. Visit this page to enable the network: https://dashboard.alchemy.com/apps/abc123/networks"}}`)
		return
	}
	q := r.URL.Query()
	switch parts[1] {
	case "getNFTsForOwner":
		ownedAnswer(w, r, q)
	case "getNFTMetadata":
		if !strings.EqualFold(q.Get("contractAddress"), baycAddr) {
			raw(w, http.StatusBadRequest, `{"error":{"message":"Contract address `+q.Get("contractAddress")+` is not a valid NFT contract"}}`)
			return
		}
		writeJSON(w, 200, nftJSON(q.Get("tokenId"), "1"))
	case "getContractMetadata":
		if !strings.EqualFold(q.Get("contractAddress"), baycAddr) {
			raw(w, http.StatusBadRequest, `{"error":{"message":"invalid contract address"}}`)
			return
		}
		writeJSON(w, 200, contractJSON())
	default:
		raw(w, http.StatusNotFound, `{"error":{"message":"Not found"}}`)
	}
}

func contractJSON() map[string]any {
	return map[string]any{"address": baycAddr, "name": "BoredApeYachtClub", "symbol": "BAYC", "totalSupply": "10000", "tokenType": "ERC721",
		"contractDeployer": "0xaba7161a7fb69c88e16ed9f455ce62b791ee4d03", "deployedBlockNumber": 12287507,
		"openSeaMetadata": map[string]any{"floorPrice": 11.85, "collectionName": "Bored Ape Yacht Club", "collectionSlug": "boredapeyachtclub",
			"safelistRequestStatus": "verified", "imageUrl": "https://i.seadn.io/gae/Ju9CkWtV-1Okvf45wo8UctR-M9He2PjILP0oOvxE89AyiPPGtrR3gysu1Zgy0hjd2xKIgjJJtWIc0ybj4Vd7wv8t3pxDGHoJBzDB?w=500&auto=format",
			"description": "The Bored Ape Yacht Club is a collection of 10,000 unique Bored Ape NFTs.", "externalUrl": "http://www.boredapeyachtclub.com/",
			"twitterUsername": "BoredApeYC", "discordUrl": "https://discord.gg/3P5K3dzgdB", "bannerImageUrl": "https://i.seadn.io/banner.png",
			"lastIngestedAt": "2026-09-27T10:12:45.000Z"}}
}

func nftJSON(tokenID, balance string) map[string]any {
	c := contractJSON()
	c["isSpam"] = false
	c["spamClassifications"] = []string{}
	n := map[string]any{"contract": c, "tokenId": tokenID, "tokenType": "ERC721", "name": "Ape #" + tokenID,
		"description": "A long description the adapter must drop.", "tokenUri": "https://ipfs.io/ipfs/QmeSjSinHpPnmXmspMjwiXyN6zS4E9zccariGR3jxcaWtq/" + tokenID,
		"image": map[string]any{"cachedUrl": "https://nft-cdn.alchemy.com/eth-mainnet/abc", "thumbnailUrl": "https://res.cloudinary.com/thumb", "pngUrl": nil,
			"contentType": "image/png", "size": 139613, "originalUrl": "https://ipfs.io/ipfs/QmImage"},
		"raw": map[string]any{"tokenUri": "ipfs://QmeSjSinHpPnmXmspMjwiXyN6zS4E9zccariGR3jxcaWtq/" + tokenID, "error": nil,
			"metadata": map[string]any{"image": "ipfs://QmImage", "attributes": []map[string]any{
				{"trait_type": "Background", "value": "Orange"}, {"trait_type": "Fur", "value": "Robot"}, {"trait_type": "Level", "value": 3}}}},
		"collection":      map[string]any{"name": "Bored Ape Yacht Club", "slug": "boredapeyachtclub", "externalUrl": "http://www.boredapeyachtclub.com/", "bannerImageUrl": "https://i.seadn.io/banner.png"},
		"mint":            map[string]any{"mintAddress": nil, "blockNumber": nil, "timestamp": "2021-04-23T00:00:00Z", "transactionHash": nil},
		"owners":          nil,
		"timeLastUpdated": "2026-09-27T10:12:45.000Z"}
	if balance != "" {
		n["balance"] = balance
		n["acquiredAt"] = map[string]any{"blockTimestamp": "2022-01-02T03:04:05Z", "blockNumber": 13927000}
	}
	return n
}

// ownedAnswer holds 40 NFTs; it pages by pageSize (default 100) with the
// offset as its opaque page key, and filters by contractAddresses[].
func ownedAnswer(w http.ResponseWriter, r *http.Request, q url.Values) {
	owner := q.Get("owner")
	if owner == "0x0000000000000000000000000000000000000000" {
		writeJSON(w, 200, map[string]any{"ownedNfts": []any{}, "totalCount": 0, "pageKey": nil,
			"validAt": map[string]any{"blockNumber": 20900000, "blockHash": "0xabc", "blockTimestamp": "2026-09-28T13:00:00Z"}})
		return
	}
	if !strings.EqualFold(owner, ownerAddr) && owner != "vitalik.eth" {
		// Alchemy quotes the request back in some errors; the key must not survive it.
		raw(w, http.StatusBadRequest, `{"error":{"message":"Owner should be a valid address or ENS name: `+r.URL.Path+`"}}`)
		return
	}
	total := 40
	if f := q["contractAddresses[]"]; len(f) > 0 && !strings.EqualFold(f[0], baycAddr) {
		total = 0
	}
	size, _ := strconv.Atoi(q.Get("pageSize"))
	if size <= 0 || size > 100 {
		size = 100
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(q.Get("pageKey"), "pk"))
	var nfts []any
	for i := from; i < min(total, from+size); i++ {
		nfts = append(nfts, nftJSON(strconv.Itoa(i), "1"))
	}
	var next any
	if from+size < total {
		next = fmt.Sprintf("pk%d", from+size)
	}
	writeJSON(w, 200, map[string]any{"ownedNfts": nfts, "totalCount": total, "pageKey": next,
		"validAt": map[string]any{"blockNumber": 20900000, "blockHash": "0xabc", "blockTimestamp": "2026-09-28T13:00:00Z"}})
}

func dasAsset(id string, i int) map[string]any {
	return map[string]any{"interface": "V1_NFT", "id": id,
		"content": map[string]any{"$schema": "https://schema.metaplex.com/nft1.0.json", "json_uri": "https://arweave.net/json",
			"files":    []map[string]any{{"uri": "https://arweave.net/img.png", "mime": "image/png"}},
			"metadata": map[string]any{"name": fmt.Sprintf("Mad Lad #%d", i), "symbol": "MAD", "description": "drop me", "token_standard": "ProgrammableNonFungible", "attributes": []map[string]any{{"trait_type": "Gender", "value": "Male"}}},
			"links":    map[string]any{"image": "https://arweave.net/img.png", "external_url": "https://madlads.com"}},
		"authorities": []map[string]any{{"address": "2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW", "scopes": []string{"full"}}},
		"compression": map[string]any{"eligible": false, "compressed": i%2 == 1, "data_hash": "", "creator_hash": "", "asset_hash": "", "tree": "", "seq": 0, "leaf_id": 0},
		"grouping":    []map[string]any{{"group_key": "collection", "group_value": "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w"}},
		"royalty":     map[string]any{"royalty_model": "creators", "percent": 0.042, "basis_points": 420},
		"creators":    []map[string]any{{"address": "5XvhfmRjwXkGp3jHGmaKpqeerNYjkuZZBYLVQYdeVcRv", "share": 0, "verified": true}},
		"ownership":   map[string]any{"frozen": true, "delegated": false, "delegate": nil, "ownership_model": "single", "owner": solOwner},
		"mutable":     true, "burnt": false}
}

// dasAnswer serves getAssetsByOwner (45 assets, paged by number) and
// getAsset, both with named parameters.
func dasAnswer(w http.ResponseWriter, body []byte) {
	var req struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		raw(w, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
		return
	}
	var p struct {
		OwnerAddress string `json:"ownerAddress"`
		Page         int    `json:"page"`
		Limit        int    `json:"limit"`
		ID           string `json:"id"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "Invalid params"}})
		return
	}
	switch req.Method {
	case "getAssetsByOwner":
		if p.OwnerAddress != solOwner {
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "Invalid owner address"}})
			return
		}
		const total = 45
		items := []any{}
		for i := (p.Page - 1) * p.Limit; i < min(total, p.Page*p.Limit); i++ {
			items = append(items, dasAsset(fmt.Sprintf("Asset%040d", i), i))
		}
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"total": len(items), "limit": p.Limit, "page": p.Page, "items": items}})
	case "getAsset":
		if p.ID != solMint {
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32000, "message": "Asset Not Found"}})
			return
		}
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": dasAsset(solMint, 7)})
	default:
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}
