package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const routerKey = "ts-e2e-router-key-0123456789abcdef"

// chatModel plays every agent of a guild's chat: each answers its group run
// with "<name> here", telling agents apart by their run's opening message.
func chatModel(t *testing.T) *httptest.Server {
	youAre := regexp.MustCompile(`You are @([\w.-]+)`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+boxModelKey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		name := "nobody"
		for _, m := range req.Messages {
			if sm := youAre.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				name = sm[1]
				break
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": name + " here"}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hangingRouter plays the TYPESAFE routing model: its first request never
// gets an answer (the worker asking is killed meanwhile), then it routes the
// operator's message to alice and bob and the agents' answers to nobody.
func hangingRouter(t *testing.T, calls *atomic.Int32, first chan<- struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+routerKey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) == 1 {
			close(first)
			<-r.Context().Done()
			return
		}
		content := `{"recipients":[],"history":1}`
		if strings.Contains(string(body), "who is on call") && strings.Contains(string(body), `The last message is #1 `) {
			content = `{"recipients":["alice","bob"],"history":10}`
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

type chatMessage struct {
	ID     string `json:"id"`
	Seq    int    `json:"seq"`
	RunID  string `json:"run_id"`
	Author struct {
		Kind, Name string
	} `json:"author"`
	Content string `json:"content"`
	Route   *struct {
		Method     string `json:"method"`
		Recipients []struct {
			Name string `json:"name"`
		} `json:"recipients"`
	} `json:"route"`
}

// TestDeployedGroupChat: an operator's message in a guild's chat, routed by
// the group-routing model, is answered by the two agents it chose even
// though the worker is killed with SIGKILL while the model is deciding:
// the restarted worker decides again, and each agent gets exactly one group
// run whose answer is posted once. Neither the router's key nor the model
// key reaches the chat, a log line or the routing's history.
func TestDeployedGroupChat(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	var calls atomic.Int32
	first := make(chan struct{})
	model, router := chatModel(t), hangingRouter(t, &calls, first)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"TYPESAFE_API_KEY": routerKey, "TYPESAFE_MODEL": "route-e2e", "GUILDS_TYPESAFE_BASE_URL": router.URL})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agents := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		agents[name] = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": name})["id"].(string)
	}
	posted := d.must(201, "POST", "/api/guilds/"+guild+"/chat/messages", map[string]any{"message": "who is on call tonight?"})
	if posted["routing"] != "router" {
		t.Fatalf("posted: %v", posted)
	}
	msgID := posted["message"].(map[string]any)["id"].(string)

	select {
	case <-first:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the routing model was never asked\n%s", d.Logs())
	}
	d.kill("worker")
	from := len(d.logs["worker"].String())
	d.start("worker")
	d.waitReady(from)

	// Wait for both answers and for their own routing (to nobody).
	var msgs []chatMessage
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var page struct {
			Messages []chatMessage `json:"messages"`
		}
		_ = json.Unmarshal(d.Call("GET", "/api/guilds/"+guild+"/chat/messages", nil).Body, &page)
		msgs = page.Messages
		routed := len(msgs) == 3
		for _, m := range msgs {
			routed = routed && m.Route != nil
		}
		if routed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat: %+v\n%s", msgs, d.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := msgs[0].Route; r.Method != "router" || len(r.Recipients) != 2 {
		t.Fatalf("route: %+v", r)
	}
	answers := map[string]string{}
	for _, m := range msgs[1:] {
		answers[m.Author.Name] = m.Content
		if m.RunID == "" || m.Author.Kind != "agent" {
			t.Errorf("answer %+v", m)
		}
		tr := d.Call("GET", "/api/runs/"+m.RunID, nil).Map()["run"].(map[string]any)
		if tr["trigger"] != "group" || tr["status"] != "completed" {
			t.Errorf("run of %s: %v", m.Author.Name, tr)
		}
	}
	if fmt.Sprint(answers) != "map[alice:alice here bob:bob here]" {
		t.Fatalf("answers: %v", answers)
	}
	for name, id := range agents {
		var list []any
		_ = json.Unmarshal(d.Call("GET", "/api/agents/"+id+"/runs", nil).Body, &list)
		if want := map[string]int{"alice": 1, "bob": 1, "carol": 0}[name]; len(list) != want {
			t.Errorf("%s has %d runs, want %d", name, len(list), want)
		}
	}
	if n := d.count(t, `SELECT count(*) FROM group_routes`); n != 3 {
		t.Errorf("%d routing decisions, want 3", n)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the routing model was asked %d times, want 4 (the lost call, its retry, one per answer)", n)
	}
	noLeak(t, append([]string{routerKey, boxModelKey}, d.secrets...), map[string]string{
		"the chat":                 string(d.Call("GET", "/api/guilds/"+guild+"/chat/messages", nil).Body),
		"the logs":                 d.Logs(),
		"the routing's history":    withPayloads(d.history("group-route-" + msgID)),
		"the database's run texts": d.dbText(t),
	})
}
