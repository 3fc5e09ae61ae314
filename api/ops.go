package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/guilds/guilds/internal/config"
)

var requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "guilds_http_requests_total", Help: "HTTP requests by route and status.",
}, []string{"method", "route", "status"})

var requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "guilds_http_request_seconds", Help: "HTTP request latency by route.",
	Buckets: prometheus.DefBuckets,
}, []string{"method", "route"})

func init() {
	prometheus.MustRegister(requestsTotal, requestSeconds)
}

func metricsMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		requestsTotal.WithLabelValues(c.Request.Method, route, strconv.Itoa(c.Writer.Status())).Inc()
		requestSeconds.WithLabelValues(c.Request.Method, route).Observe(time.Since(start).Seconds())
	}
}

func (s *Server) opsRoutes() []route {
	return []route{
		{Method: "GET", Path: "/healthz", Tag: "operations", Public: true, Summary: "The process is alive",
			Raw: func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }},
		{Method: "GET", Path: "/readyz", Tag: "operations", Public: true,
			Summary: "PostgreSQL, Redis and Temporal are reachable", Raw: s.readyz},
		{Method: "GET", Path: "/metrics", Tag: "operations", Public: true, Summary: "Prometheus metrics",
			Raw: gin.WrapH(promhttp.Handler())},
		{Method: "GET", Path: "/api/openapi.json", Tag: "operations", Public: true,
			Summary: "The OpenAPI document of this API", Raw: s.openapi},
	}
}

func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
	defer cancel()
	checks := gin.H{}
	ok := true
	// The endpoint is public: a failure names no address and, should a
	// server echo what it was sent, no password.
	var passwords []string
	if s.DB != nil {
		passwords = append(passwords, s.DB.Config().ConnConfig.Password)
	}
	if s.Redis != nil {
		passwords = append(passwords, s.Redis.Options().Password)
	}
	check := func(name string, err error) {
		if err != nil {
			ok = false
			checks[name] = config.RedactWith(err.Error(), passwords...)
			return
		}
		checks[name] = "ok"
	}
	check("postgres", s.DB.Ping(ctx))
	if s.Redis != nil {
		check("redis", s.Redis.Ping(ctx).Err())
	} else {
		checks["redis"] = "not configured"
		ok = false
	}
	if s.Temporal != nil {
		_, err := s.Temporal.CheckHealth(ctx, nil)
		check("temporal", err)
	} else {
		checks["temporal"] = "not configured"
		ok = false
	}
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	c.JSON(status, gin.H{"ready": ok, "checks": checks})
}
