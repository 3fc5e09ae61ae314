package e2e

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/guilds/guilds/internal/adapters/wallet/wallettest"
)

// The Wallet's keys: the EVM key is also a funded account of the local
// node; the Solana key is a JSON array of its 64 bytes.
const (
	walletEVMKey     = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	walletAlchemyKey = "alk-e2e-secret-0123456789"
	walletOpenSeaKey = "osk-e2e-secret-0123456789"
)

func walletValues() map[string]string {
	var b []int
	for _, x := range ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)) {
		b = append(b, int(x))
	}
	sol, _ := json.Marshal(b)
	return map[string]string{"evm_private_key": "0x" + walletEVMKey, "solana_private_key": string(sol),
		"alchemy_api_key": walletAlchemyKey, "opensea_api_key": walletOpenSeaKey}
}

// startGanache runs a local Ethereum node (chain id 1) on loopback with the
// Wallet's EVM key funded with 100 ETH and answers its URL; the test skips
// when ganache is not installed (CI installs it).
func startGanache(t *testing.T) string {
	t.Helper()
	return wallettest.StartGanache(t, walletEVMKey)
}

// walletServices lays out what the Wallet reaches under one catalog URL, as
// a non-Alchemy URL does: Ethereum's RPC (with the key in the path) goes to
// the local node, Solana's answers the slot, OpenSea its chain list.
func walletServices(t *testing.T, node string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/ethereum/"+walletAlchemyKey, func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Post(node, "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	})
	mux.HandleFunc("POST /v2/solana/"+walletAlchemyKey, func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":123456}`, q.ID)
	})
	mux.HandleFunc("GET /v2/opensea/chains", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-KEY") != walletOpenSeaKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"chains":[{"chain":"ethereum"}]}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}
