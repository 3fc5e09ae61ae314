package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/drive"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// The folder choice of a Drive login: after the Google login the login stays
// pending until the operator chooses the one folder (not My Drive) its calls
// are confined to; the choice connects it.
func (s *Server) driveRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/mcp/connections/:id/drive/folders", Tag: "connections",
			Summary: "Folders a Drive login may be confined to: corpus my (My Drive), shared (Shared with me) or drives (Shared drives); parent lists the folders inside one",
			Reply:   []drive.Folder{}, Handle: s.listDriveFolders, NoTx: true},
		{Method: "PUT", Path: "/api/mcp/connections/:id/drive/folder", Tag: "connections",
			Summary: "Choose the folder a Drive login is confined to (not My Drive); the login is connected with the folder's name as its account hint",
			Body:    driveFolderInput{}, Reply: driveFolderReply{}, Handle: s.chooseDriveFolder, NoTx: true},
	}
}

type driveFolderInput struct {
	FolderID string `json:"folder_id"`
}

type driveFolderReply struct {
	Connection connections.Connection `json:"connection"`
	Folder     drive.Folder           `json:"folder"`
	Tools      int                    `json:"tools"`
}

func (s *Server) listDriveFolders(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := s.driveLogin(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	corpus := strings.TrimSpace(c.Query("corpus"))
	if corpus == "" {
		corpus = drive.CorpusMy
	}
	var folders []drive.Folder
	err = s.MCP.Adapters.WithConn(ctx, conn.ID, func(ctx context.Context, ac adapters.Conn) error {
		var err error
		folders, err = drive.ListFolders(ctx, ac, corpus, c.Query("parent"))
		return err
	})
	if err != nil {
		return 0, nil, s.driveFailure(err)
	}
	return http.StatusOK, folders, nil
}

func (s *Server) chooseDriveFolder(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := s.driveLogin(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	var in driveFolderInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if strings.TrimSpace(in.FolderID) == "" {
		return 0, nil, invalidField(drive.FieldFolderID, "is required: the id of one folder from GET /api/mcp/connections/{id}/drive/folders")
	}
	var folder drive.Folder
	err = s.MCP.Adapters.WithConn(ctx, conn.ID, func(ctx context.Context, ac adapters.Conn) error {
		var err error
		folder, err = drive.CheckFolder(ctx, ac, in.FolderID)
		return err
	})
	if err != nil {
		return 0, nil, s.driveFailure(err)
	}
	res, err := s.connectService().Choose(ctx, conn.ID, actor(p), map[string]string{drive.FieldFolderID: folder.ID, drive.FieldFolderName: folder.Name})
	if err != nil {
		return 0, nil, s.driveFailure(err)
	}
	if res.ListErr != nil {
		s.Log.Warn("drive: first listing failed; tools appear at the next run start", "connection", conn.ID, "err", res.ListErr.Error())
	}
	fresh, err := connections.LoadConnection(ctx, store.Bounded{Pool: s.DB}, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, driveFolderReply{Connection: fresh, Folder: folder, Tools: max(res.Tools, 0)}, nil
}

// driveLogin loads the login of :id, visible to the caller, of the Drive
// adapter, logged in with Google and not disconnected. A platform login acts
// with the box's own credential, which only an instance admin may use.
func (s *Server) driveLogin(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (connections.Connection, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return conn, err
	}
	srv, err := grants.LoadServerRoute(ctx, db, conn.ServerID)
	if err != nil {
		return conn, err
	}
	if srv.Kind != catalog.KindAdapter || srv.Adapter != drive.Name {
		return conn, &Error{Status: http.StatusUnprocessableEntity, Code: "not_drive",
			Message: conn.ServerSlug + " is not a Drive login; only those choose a folder"}
	}
	if conn.OwnerScope == grants.ScopePlatform && !p.Admin {
		return conn, access.ErrForbidden
	}
	if s.MCP.Engine == nil || s.MCP.Adapters == nil {
		return conn, notConfigured()
	}
	if conn.Status == connections.StatusDisconnected {
		return conn, &Error{Status: http.StatusConflict, Code: "not_connected", Message: "the login is disconnected; connect Drive again first"}
	}
	return conn, nil
}

// driveFailure maps a failed folder list or choice: bad input names its
// field, a login without a Google token or with a refused one says to
// connect again, anything else says Drive could not answer.
func (s *Server) driveFailure(err error) error {
	var ce *drive.ChoiceError
	var rr *connectors.ErrReconnectRequired
	switch {
	case errors.As(err, &ce):
		return invalidField(ce.Field, ce.Message)
	case errors.Is(err, connectors.ErrNoCredential):
		return &Error{Status: http.StatusConflict, Code: "not_logged_in", Message: "the login has no Google token yet: finish the Google login first"}
	case errors.As(err, &rr), adapters.Rejected(err):
		return &Error{Status: http.StatusConflict, Code: "reconnect_required", Message: "Google refused the login's token: connect Drive again"}
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrBusy):
		return err
	}
	s.Log.Warn("drive: folder request failed", "err", err.Error())
	return &Error{Status: http.StatusBadGateway, Code: "service_failed", Message: "Drive could not answer: " + err.Error()}
}
