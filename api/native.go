package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/native/notes"
	"github.com/guilds/guilds/internal/native/records"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// nativeRoutes are the operator's views of the agents' durable knowledge:
// notes at three levels, collections with their grants and records, and
// memory with its revisions. Operators of the organisation see everything in
// it; artifact grants only limit agents.
func (s *Server) nativeRoutes() []route {
	var rs []route
	for _, lv := range []struct{ path, what string }{
		{"/api/agents/:id/notes", "an agent's"}, {"/api/guilds/:id/notes", "a guild's"}, {"/api/orgs/:id/notes", "an organisation's"},
	} {
		rs = append(rs,
			route{Method: "GET", Path: lv.path, Tag: "notes", Summary: "List " + lv.what + " notes",
				Reply: []artifacts.Artifact{}, Handle: listNotes},
			route{Method: "GET", Path: lv.path + "/:key", Tag: "notes", Summary: "Read one of " + lv.what + " notes",
				Reply: artifacts.Artifact{}, Handle: getNote},
			route{Method: "PUT", Path: lv.path + "/:key", Tag: "notes", Summary: "Create or replace one of " + lv.what + " notes",
				Body: noteInput{}, Reply: artifacts.Artifact{}, Handle: putNote},
			route{Method: "DELETE", Path: lv.path + "/:key", Tag: "notes", Summary: "Delete one of " + lv.what + " notes",
				Status: 204, Handle: deleteNote},
		)
	}
	return append(rs,
		route{Method: "GET", Path: "/api/orgs/:id/collections", Tag: "collections", Summary: "List an organisation's collections",
			Reply: []records.Collection{}, Handle: listCollections},
		route{Method: "POST", Path: "/api/orgs/:id/collections", Tag: "collections", Summary: "Define a collection (guild_id makes it a guild's own table)",
			Body: records.CollectionInput{}, Reply: records.Collection{}, Status: 201, Handle: createCollection},
		route{Method: "GET", Path: "/api/collections/:id", Tag: "collections", Summary: "Get a collection",
			Reply: records.Collection{}, Handle: getCollection},
		route{Method: "PATCH", Path: "/api/collections/:id", Tag: "collections", Summary: "Rename, describe or re-declare a collection's columns",
			Body: records.CollectionInput{}, Reply: records.Collection{}, Handle: updateCollection},
		route{Method: "DELETE", Path: "/api/collections/:id", Tag: "collections", Summary: "Delete a collection with its records",
			Status: 204, Handle: deleteCollection},
		route{Method: "GET", Path: "/api/collections/:id/grants", Tag: "collections", Summary: "List a collection's grants",
			Reply: []records.Grant{}, Handle: listGrants},
		route{Method: "PUT", Path: "/api/collections/:id/grants", Tag: "collections", Summary: "Set the grant of one guild or one agent",
			Body: records.GrantInput{}, Reply: records.Grant{}, Handle: putGrant},
		route{Method: "DELETE", Path: "/api/collections/:id/grants/:subject_id", Tag: "collections", Summary: "Remove the grant of a guild or agent",
			Status: 204, Handle: deleteGrant},
		route{Method: "GET", Path: "/api/collections/:id/records", Tag: "records", Summary: "List a collection's records (limit, offset, since, where as JSON, order and direction, or q to search)",
			Reply: records.ListResult{}, Handle: listRecords},
		route{Method: "POST", Path: "/api/collections/:id/records", Tag: "records", Summary: "Add a record (merged into the live record with the same unique value)",
			Body: map[string]any{}, Reply: records.Record{}, Status: 201, Handle: addRecord},
		route{Method: "GET", Path: "/api/collections/:id/records/:record_id", Tag: "records", Summary: "Get a record",
			Reply: records.Record{}, Handle: getRecord},
		route{Method: "PATCH", Path: "/api/collections/:id/records/:record_id", Tag: "records", Summary: "Change some columns of a record (null clears)",
			Body: map[string]any{}, Reply: records.Updated{}, Handle: updateRecord},
		route{Method: "DELETE", Path: "/api/collections/:id/records/:record_id", Tag: "records", Summary: "Remove a record",
			Status: 204, Handle: removeRecord},
		route{Method: "GET", Path: "/api/agents/:id/memory", Tag: "memory", Summary: "Read an agent's memory",
			Reply: memory.Memory{}, Handle: getMemory},
		route{Method: "PUT", Path: "/api/agents/:id/memory", Tag: "memory", Summary: "Replace an agent's memory (the previous version is archived)",
			Body: noteInput{}, Reply: memory.Memory{}, Handle: putMemory},
		route{Method: "GET", Path: "/api/agents/:id/memory/revisions", Tag: "memory", Summary: "List an agent's archived memory versions, newest first",
			Reply: []memory.Revision{}, Handle: listMemoryRevisions},
	)
}

type noteInput struct {
	Content string `json:"content"`
}

// noteOwner resolves the owner named by the path, checking visibility.
func noteOwner(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (artifacts.Owner, error) {
	id := c.Param("id")
	switch c.FullPath()[len("/api/"):][:4] {
	case "agen":
		a, err := orgs.GetAgent(ctx, db, p, id)
		return artifacts.Owner{Scope: artifacts.ScopeAgent, ID: a.ID, OrgID: a.OrganisationID}, err
	case "guil":
		g, err := orgs.GetGuild(ctx, db, p, id)
		return artifacts.Owner{Scope: artifacts.ScopeGuild, ID: g.ID, OrgID: g.OrganisationID}, err
	default:
		o, err := orgs.GetOrg(ctx, db, p, id)
		return artifacts.Owner{Scope: artifacts.ScopeOrg, ID: o.ID, OrgID: o.ID}, err
	}
}

func noteKey(c *gin.Context) (string, error) {
	key := c.Param("key")
	if err := notes.CheckKey(key); err != nil {
		return "", &Error{Status: http.StatusUnprocessableEntity, Code: "invalid", Message: err.Error(),
			Problems: []validation.Problem{{Field: "key", Message: err.Error()}}}
	}
	return key, nil
}

func listNotes(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	o, err := noteOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := artifacts.List(ctx, db, artifacts.KindNote, []artifacts.Owner{o}, artifacts.Filter{Words: notes.Words(c.Query("q")), Limit: 1000})
	return http.StatusOK, out, err
}

func getNote(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	o, err := noteOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := artifacts.Get(ctx, db, artifacts.KindNote, o, c.Param("key"))
	return http.StatusOK, out, err
}

func putNote(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in noteInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	o, err := noteOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	key, err := noteKey(c)
	if err != nil {
		return 0, nil, err
	}
	if err := notes.CheckContent(in.Content); err != nil {
		return 0, nil, err
	}
	out, created, err := artifacts.Put(ctx, db, artifacts.KindNote, o, key, in.Content)
	if created {
		return http.StatusCreated, out, err
	}
	return http.StatusOK, out, err
}

func deleteNote(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	o, err := noteOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, artifacts.Delete(ctx, db, artifacts.KindNote, o, c.Param("key"))
}

// visibleCollection loads a collection of an organisation the caller sees.
func visibleCollection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (records.Collection, error) {
	coll, err := records.GetCollection(ctx, db, c.Param("id"))
	if err != nil {
		return coll, err
	}
	if !p.CanSeeOrg(coll.OrganisationID) {
		return records.Collection{}, store.ErrNotFound
	}
	return coll, nil
}

func listCollections(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := records.ListCollections(ctx, db, c.Param("id"))
	return http.StatusOK, out, err
}

func createCollection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in records.CollectionInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := records.CreateCollection(ctx, db, c.Param("id"), in)
	return http.StatusCreated, out, err
}

func getCollection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := visibleCollection(ctx, c, db, p)
	return http.StatusOK, out, err
}

func updateCollection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in records.CollectionInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if _, err := visibleCollection(ctx, c, db, p); err != nil {
		return 0, nil, err
	}
	out, err := records.UpdateCollection(ctx, db, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteCollection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := visibleCollection(ctx, c, db, p); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, records.DeleteCollection(ctx, db, c.Param("id"))
}

func listGrants(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := records.ListGrants(ctx, db, coll.ID)
	return http.StatusOK, out, err
}

func putGrant(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in records.GrantInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := records.PutGrant(ctx, db, coll, in)
	return http.StatusOK, out, err
}

func deleteGrant(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, records.DeleteGrant(ctx, db, coll.ID, c.Param("subject_id"))
}

func intQuery(c *gin.Context, name string, probs *validation.Problems) int {
	v := c.Query(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	probs.Check(err == nil, name, "must be an integer")
	return n
}

func listRecords(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	var probs validation.Problems
	q := records.ListQuery{Limit: intQuery(c, "limit", &probs), Offset: intQuery(c, "offset", &probs), Since: c.Query("since")}
	if w := c.Query("where"); w != "" {
		probs.Check(json.Unmarshal([]byte(w), &q.Where) == nil, "where", `must be a JSON object of column: term, e.g. {"stage":"new"}`)
	}
	if col := c.Query("order"); col != "" {
		q.Order = &records.Order{Column: col, Direction: c.Query("direction")}
	}
	if err := probs.Err(); err != nil {
		return 0, nil, err
	}
	if text := c.Query("q"); text != "" {
		q.Limit = max(q.Limit, 0)
		recs, err := records.Search(ctx, db, []records.Collection{coll}, records.SearchQuery{Query: text, Limit: q.Limit})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, records.ListResult{Total: len(recs), Records: recs}, nil
	}
	out, err := records.List(ctx, db, coll, q)
	return http.StatusOK, out, err
}

func addRecord(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var body records.Body
	if err := bindJSON(c, &body); err != nil {
		return 0, nil, err
	}
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	res, err := records.Add(ctx, db, coll, body)
	if err != nil {
		return 0, nil, err
	}
	if res.MergedInto != "" {
		return http.StatusOK, res.Record, nil
	}
	return http.StatusCreated, res.Record, nil
}

func getRecord(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := records.Get(ctx, db, coll, c.Param("record_id"))
	return http.StatusOK, out, err
}

func updateRecord(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var body records.Body
	if err := bindJSON(c, &body); err != nil {
		return 0, nil, err
	}
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := records.Update(ctx, db, coll, c.Param("record_id"), body)
	return http.StatusOK, out, err
}

func removeRecord(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	coll, err := visibleCollection(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, records.Remove(ctx, db, coll, c.Param("record_id"))
}

func getMemory(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := memory.Get(ctx, db, a.ID)
	return http.StatusOK, out, err
}

func putMemory(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in noteInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	a, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := memory.Write(ctx, db, a.ID, in.Content)
	return http.StatusOK, out, err
}

func listMemoryRevisions(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := memory.Revisions(ctx, db, a.ID)
	return http.StatusOK, out, err
}
