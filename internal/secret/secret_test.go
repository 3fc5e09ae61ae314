package secret_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/secret"
)

func mustKey(t *testing.T, kid string) string {
	t.Helper()
	k, err := secret.GenerateKey(kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRoundTrip(t *testing.T) {
	kr, err := secret.ParseKeyring(mustKey(t, "a1"))
	if err != nil {
		t.Fatal(err)
	}
	pt := []byte("refresh-token-value")
	ct, err := kr.Seal(pt, []byte("conn-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ct, pt) {
		t.Fatal("ciphertext contains plaintext")
	}
	if id, _ := secret.KeyID(ct); id != "a1" {
		t.Fatalf("kid = %q", id)
	}
	got, err := kr.Open(ct, []byte("conn-1"))
	if err != nil || string(got) != string(pt) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := kr.Open(ct, []byte("conn-2")); !errors.Is(err, secret.ErrDecrypt) {
		t.Fatalf("other aad: %v", err)
	}
	bad := bytes.Clone(ct)
	bad[len(bad)-1] ^= 1
	if _, err := kr.Open(bad, []byte("conn-1")); !errors.Is(err, secret.ErrDecrypt) {
		t.Fatalf("tampered: %v", err)
	}
	// The kid is authenticated: relabelling the ciphertext fails.
	relabel := bytes.Clone(ct)
	relabel[2] = 'b'
	kr2, _ := secret.ParseKeyring(mustKey(t, "a1") + "," + "b1:" + strings.SplitN(mustKey(t, "x"), ":", 2)[1])
	if _, err := kr2.Open(relabel, []byte("conn-1")); err == nil {
		t.Fatal("relabelled ciphertext opened")
	}
}

func TestRotation(t *testing.T) {
	oldK, newK := mustKey(t, "k1"), mustKey(t, "k2")
	before, _ := secret.ParseKeyring(oldK)
	ct, _ := before.Seal([]byte("x"), nil)
	during, err := secret.ParseKeyring(newK + "," + oldK)
	if err != nil {
		t.Fatal(err)
	}
	if during.ActiveKeyID() != "k2" || !during.NeedsRotation(ct) {
		t.Fatal("k2 must be active and the k1 ciphertext due for rotation")
	}
	if pt, err := during.Open(ct, nil); err != nil || string(pt) != "x" {
		t.Fatalf("old key must still decrypt: %v", err)
	}
	ct2, _ := during.Seal([]byte("x"), nil)
	after, _ := secret.ParseKeyring(newK)
	if _, err := after.Open(ct2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := after.Open(ct, nil); !errors.Is(err, secret.ErrUnknownKey) {
		t.Fatalf("dropped key: %v", err)
	}
}

func TestParseKeyring(t *testing.T) {
	raw := make([]byte, 32)
	bare := base64.StdEncoding.EncodeToString(raw)
	kr, err := secret.ParseKeyring(bare)
	if err != nil || kr.ActiveKeyID() != "k1" {
		t.Fatalf("bare key: %v", err)
	}
	if _, err := secret.ParseKeyring("x1:" + base64.RawURLEncoding.EncodeToString(raw)); err != nil {
		t.Fatalf("raw url base64: %v", err)
	}
	for _, bad := range []string{"", "k1:", "k1:" + base64.StdEncoding.EncodeToString(raw[:16]), "bad kid:" + bare, "k1:" + bare + ",k1:" + bare, "k1:!!!"} {
		_, err := secret.ParseKeyring(bad)
		if err == nil {
			t.Errorf("ParseKeyring(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), bare) {
			t.Errorf("error leaks key material: %v", err)
		}
	}
}

func TestDevKeyring(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var wg sync.WaitGroup
	ids := make([][]byte, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kr, err := secret.DevKeyring(dir)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i], _ = kr.Seal([]byte("p"), nil)
		}()
	}
	wg.Wait()
	kr, err := secret.DevKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range ids {
		if _, err := kr.Open(ct, nil); err != nil {
			t.Fatal("concurrent first calls disagreed on the key")
		}
	}
	fi, err := os.Stat(filepath.Join(dir, secret.DevKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}
