// Package tools is where every tool call of the platform ends: the registry of
// native tools, the JSON Schemas shaped for models, the argument checks and the
// result pipeline.
//
// A call travels through the package in this order:
//
//  1. The run offers tools: [Registry.Offers] for native tools and [ShapeAll]
//     for remote (MCP) tools give the model-facing schema of each tool, and a
//     tool whose schema cannot be offered is left out with a warning.
//  2. The model answers with a call. A name the run did not offer is refused
//     with [RefuseUnknown]. Optional empty strings are dropped, then the
//     arguments are checked against the original schema (never the shaped
//     one) and every problem is reported in one result ([Schema.Prepare],
//     used by [Registry.Invoke] and before every MCP call).
//  3. The handler returns a raw string, or an error that becomes "ERROR: …"
//     while the detail goes to the injected logger.
//  4. [Stamp] turns the raw string into the only string that is stored and
//     shown to the model: custom filter, redaction of the run's secrets
//     ([Redactor]), byte cap, then the remaining_tool_calls trailer.
package tools
