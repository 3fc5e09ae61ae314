package records

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Query limits.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	MaxWhere     = 8
)

// Order sorts a list.
type Order struct {
	Column    string `json:"column"`
	Direction string `json:"direction"` // asc | desc
}

// ListQuery narrows and pages record_list.
type ListQuery struct {
	Where  map[string]json.RawMessage `json:"where,omitempty"`
	Since  string                     `json:"since,omitempty"`
	Order  *Order                     `json:"order,omitempty"`
	Limit  int                        `json:"limit,omitempty"`
	Offset int                        `json:"offset,omitempty"`
}

// Hint explains an empty narrowed result.
type Hint struct {
	Size         int        `json:"size"`
	NewestChange *time.Time `json:"newest_change"`
	Columns      []Column   `json:"columns"`
}

// ListResult is record_list's answer.
type ListResult struct {
	Total   int      `json:"total"`
	Records []Record `json:"records"`
	Hint    *Hint    `json:"hint,omitempty"`
}

// sqlb gathers conditions and their arguments.
type sqlb struct {
	conds    []string
	args     []any
	contains map[string]any // merged into one data @> condition
}

func (b *sqlb) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

func (b *sqlb) where() string {
	if len(b.contains) > 0 {
		j, _ := json.Marshal(b.contains)
		b.conds = append(b.conds, "r.data @> "+b.arg(string(j))+"::jsonb")
		b.contains = nil
	}
	return strings.Join(b.conds, " AND ")
}

// bad refuses one argument of a query; field names it for the operator API.
func bad(field, format string, args ...any) error {
	return artifacts.OnField(field, format, args...)
}

// textMatch is the rule for open text: a substring, or a similar spelling of
// a word (pg_trgm word similarity). The first condition runs on the record's
// trigram-indexed search_text so the index narrows the rows; the second
// confirms the match in the named column.
func (b *sqlb) textMatch(name, term string, array bool) {
	pat := b.arg("%" + artifacts.EscapeLike(term) + "%")
	t := b.arg(term)
	n := b.arg(name)
	b.conds = append(b.conds, fmt.Sprintf("(r.search_text ILIKE %s OR %s <%% r.search_text)", pat, t))
	if array {
		b.conds = append(b.conds, fmt.Sprintf(
			"EXISTS (SELECT 1 FROM jsonb_array_elements_text(r.data->%s) e(v) WHERE e.v ILIKE %s OR %s <%% e.v)", n, pat, t))
		return
	}
	b.conds = append(b.conds, fmt.Sprintf("((r.data->>%s) ILIKE %s OR %s <%% (r.data->>%s))", n, pat, t, n))
}

// addWhere turns where terms into conditions, refusing what the column's type does not allow.
func (b *sqlb) addWhere(c Collection, where map[string]json.RawMessage) error {
	if len(where) > MaxWhere {
		return bad("where", "where takes at most %d terms, got %d", MaxWhere, len(where))
	}
	names := make([]string, 0, len(where))
	for k := range where {
		names = append(names, k)
	}
	sort.Strings(names)
	var problems []string
	for _, name := range names {
		raw := where[name]
		col, ok := column(c.Columns, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not a column of %q (columns: %s)", name, c.Name, columnNames(c.Columns)))
			continue
		}
		if err := b.term(col, raw); err != "" {
			problems = append(problems, name+": "+err)
		}
	}
	if len(problems) > 0 {
		e := artifacts.Errorf(http.StatusUnprocessableEntity, "where rejected: %s", strings.Join(problems, "; "))
		for _, p := range problems {
			col, msg, _ := strings.Cut(p, ": ")
			e.Problems = append(e.Problems, validation.Problem{Field: "where." + col, Message: msg})
		}
		return e
	}
	return nil
}

func (b *sqlb) term(col Column, raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "null" {
		b.conds = append(b.conds, "NOT (r.data ? "+b.arg(col.Name)+")")
		return ""
	}
	if strings.HasPrefix(s, "{") {
		if col.Type != TypeNumber && col.Type != TypeDatetime {
			return "a {gte, lte} range only applies to number and datetime columns"
		}
		var rg map[string]json.RawMessage
		if json.Unmarshal(raw, &rg) != nil || len(rg) == 0 {
			return "a range is {\"gte\": …, \"lte\": …}"
		}
		for k, v := range rg {
			op := map[string]string{"gte": ">=", "lte": "<=", "gt": ">", "lt": "<"}[k]
			if op == "" {
				return fmt.Sprintf("unknown range key %q (use gte and lte)", k)
			}
			nv, msg := normalize(col, v)
			if msg != "" {
				return k + " " + msg
			}
			cast := "numeric"
			if col.Type == TypeDatetime {
				cast = "timestamptz"
			}
			val, _ := json.Marshal(nv)
			var txt any = strings.Trim(string(val), `"`)
			b.conds = append(b.conds, fmt.Sprintf("(r.data->>%s)::%s %s %s::%s", b.arg(col.Name), cast, op, b.arg(txt), cast))
		}
		return ""
	}
	switch col.Type {
	case TypeText, TypeTextArray:
		var t string
		if json.Unmarshal(raw, &t) != nil || strings.TrimSpace(t) == "" {
			return "must be a non-empty string to match"
		}
		b.textMatch(col.Name, strings.TrimSpace(t), col.Type == TypeTextArray)
		return ""
	case TypeEnumArray:
		var t string
		if json.Unmarshal(raw, &t) != nil {
			return "must be one of " + quoteList(col.Values)
		}
		if _, msg := normalize(col, json.RawMessage(`[`+string(raw)+`]`)); msg != "" {
			return "must be one of " + quoteList(col.Values)
		}
		b.contain(col.Name, []string{t})
		return ""
	}
	v, msg := normalize(col, raw)
	if msg != "" {
		return msg
	}
	b.contain(col.Name, v)
	return ""
}

func (b *sqlb) contain(name string, v any) {
	if b.contains == nil {
		b.contains = map[string]any{}
	}
	b.contains[name] = v
}

// orderBy builds the ORDER BY of a list.
func orderBy(b *sqlb, c Collection, o *Order, since bool) (string, error) {
	if o == nil || o.Column == "" {
		if since {
			return "r.updated_at ASC, r.id ASC", nil
		}
		return "r.updated_at DESC, r.id DESC", nil
	}
	dir := strings.ToUpper(o.Direction)
	if dir == "" {
		dir = "ASC"
	}
	if dir != "ASC" && dir != "DESC" {
		return "", bad("order.direction", `order.direction must be "asc" or "desc"`)
	}
	switch o.Column {
	case "id", "created_at", "updated_at":
		return fmt.Sprintf("r.%s %s, r.id %s", o.Column, dir, dir), nil
	}
	col, ok := column(c.Columns, o.Column)
	if !ok || col.Type.IsArray() {
		return "", bad("order.column", "order.column must be id, created_at, updated_at or a declared column that is not an array (%s)", scalarNames(c.Columns))
	}
	expr := "(r.data->>" + b.arg(col.Name) + ")"
	switch col.Type {
	case TypeNumber:
		expr += "::numeric"
	case TypeDatetime:
		expr += "::timestamptz"
	case TypeBoolean:
		expr += "::boolean"
	}
	return fmt.Sprintf("%s %s NULLS LAST, r.id %s", expr, dir, dir), nil
}

func scalarNames(cols []Column) string {
	var n []string
	for _, c := range cols {
		if !c.Type.IsArray() {
			n = append(n, c.Name)
		}
	}
	return strings.Join(n, ", ")
}

func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLimit, nil
	case limit < 0 || limit > MaxLimit:
		return 0, bad("limit", "limit must be between 1 and %d", MaxLimit)
	}
	return limit, nil
}

// List returns a page of a collection's live records.
func List(ctx context.Context, db store.DB, c Collection, q ListQuery) (ListResult, error) {
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return ListResult{}, err
	}
	if q.Offset < 0 {
		return ListResult{}, bad("offset", "offset must be 0 or more")
	}
	b := &sqlb{}
	b.conds = append(b.conds, "r.collection_id = "+b.arg(c.ID), "r.deleted_at IS NULL")
	if err := b.addWhere(c, q.Where); err != nil {
		return ListResult{}, err
	}
	if q.Since != "" {
		t, ok := ParseTime(q.Since)
		if !ok {
			return ListResult{}, bad("since", "since must be an ISO 8601 timestamp, e.g. 2025-01-31T09:00:00Z")
		}
		b.conds = append(b.conds, "r.updated_at >= "+b.arg(t))
	}
	order, err := orderBy(b, c, q.Order, q.Since != "")
	if err != nil {
		return ListResult{}, err
	}
	where := b.where()
	sql := fmt.Sprintf(`SELECT %s, count(*) OVER () FROM records r WHERE %s ORDER BY %s LIMIT %d OFFSET %d`,
		recCols, where, order, limit, q.Offset)
	rows, err := db.Query(ctx, sql, b.args...)
	if err != nil {
		return ListResult{}, store.Map(err)
	}
	res := ListResult{Records: []Record{}}
	for rows.Next() {
		r := Record{Collection: c.Name}
		var data []byte
		if err := rows.Scan(&r.ID, &data, &r.CreatedAt, &r.UpdatedAt, &res.Total); err != nil {
			rows.Close()
			return ListResult{}, err
		}
		r.Values = data
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		res.Records = append(res.Records, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ListResult{}, store.Map(err)
	}
	if len(res.Records) == 0 && q.Offset > 0 {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM records r WHERE `+where, b.args...).Scan(&res.Total); err != nil {
			return ListResult{}, store.Map(err)
		}
	}
	if res.Total == 0 && (len(q.Where) > 0 || q.Since != "") {
		h, err := hint(ctx, db, c)
		if err != nil {
			return ListResult{}, err
		}
		res.Hint = &h
	}
	return res, nil
}

func hint(ctx context.Context, db store.DB, c Collection) (Hint, error) {
	h := Hint{Columns: c.Columns}
	err := db.QueryRow(ctx, `SELECT count(*), max(updated_at) FROM records WHERE collection_id = $1 AND deleted_at IS NULL`, c.ID).
		Scan(&h.Size, &h.NewestChange)
	if h.NewestChange != nil {
		t := h.NewestChange.UTC()
		h.NewestChange = &t
	}
	return h, store.Map(err)
}

// SearchQuery is record_search's input.
type SearchQuery struct {
	Query string
	Where map[string]json.RawMessage
	Limit int
}

// SingleToken reports whether q is one plain token, which search matches as a
// substring rather than through the word grammar.
func SingleToken(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" || strings.ContainsFunc(q, unicode.IsSpace) || strings.ContainsRune(q, '"') || strings.HasPrefix(q, "-") {
		return false
	}
	return !strings.EqualFold(q, "or")
}

// Search finds live records of the given collections whose values hold the
// query. where is only allowed with exactly one collection.
func Search(ctx context.Context, db store.DB, colls []Collection, q SearchQuery) ([]Record, error) {
	query := strings.TrimSpace(q.Query)
	if query == "" {
		return nil, bad("query", "query is required: give one or more words to look for")
	}
	if !strings.ContainsFunc(query, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return nil, bad("query", "query %q has no letters or digits to search for", query)
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	if len(q.Where) > 0 && len(colls) != 1 {
		return nil, bad("collection", "where needs collection: name the collection whose columns it filters")
	}
	if len(colls) == 0 {
		return []Record{}, nil
	}
	b := &sqlb{}
	ids := make([]string, len(colls))
	names := map[string]string{}
	for i, c := range colls {
		ids[i] = c.ID
		names[c.ID] = c.Name
	}
	if len(ids) == 1 {
		b.conds = append(b.conds, "r.collection_id = "+b.arg(ids[0]))
	} else {
		b.conds = append(b.conds, "r.collection_id = ANY("+b.arg(ids)+"::uuid[])")
	}
	b.conds = append(b.conds, "r.deleted_at IS NULL")
	if SingleToken(query) {
		b.conds = append(b.conds, "r.search_text ILIKE "+b.arg("%"+artifacts.EscapeLike(query)+"%"))
	} else {
		b.conds = append(b.conds, "r.search_tsv @@ websearch_to_tsquery('simple', "+b.arg(query)+")")
	}
	if len(q.Where) > 0 {
		if err := b.addWhere(colls[0], q.Where); err != nil {
			return nil, err
		}
	}
	sql := fmt.Sprintf(`SELECT r.collection_id, %s FROM records r WHERE %s ORDER BY r.updated_at DESC, r.id DESC LIMIT %d`,
		recCols, b.where(), limit)
	rows, err := db.Query(ctx, sql, b.args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Record{}
	for rows.Next() {
		var r Record
		var cid string
		var data []byte
		if err := rows.Scan(&cid, &r.ID, &data, &r.CreatedAt, &r.UpdatedAt); err != nil {
			return nil, err
		}
		r.Collection, r.Values = names[cid], data
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		out = append(out, r)
	}
	return out, store.Map(rows.Err())
}
