// Package grants decides which tools an agent is offered.
//
// It holds the three objects of the tool grant: the catalog (the native tool
// names and the connector servers with their published tools), connections
// (one login for one server, owned at a scope) and bindings (which scope turns
// which catalog item on or off, and which login it uses). Resolution walks the
// scopes platform → organisation → guild → agent; see
// docs/adr/0301-binding-resolution.md. What a run finally offers is the pure
// function [BuildOffer] of the resolved grants, the agent's flags, the
// trigger, the box's integrations and the native tool registry; [Service.Offered]
// loads its inputs in a constant number of queries.
package grants
