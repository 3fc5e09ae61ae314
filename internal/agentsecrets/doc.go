// Package agentsecrets owns the agents' named secrets: values an operator
// (or an agent, through secret_store) sets at an organisation, guild or
// agent, sealed with the credential keyring, granted to agents along the
// chain organisation → guild → agent (the most specific grant row wins; an
// agent-owned secret reaches its own agent unless a row says otherwise).
//
// A granted secret becomes an environment variable of the agent's shell
// commands and joins the redaction set of every run of that agent from the
// moment it is stored. No function here returns a value to the API: list
// and get give metadata, and every change writes an audit row without it.
//
// The package also keeps the sealed arguments of secret_store calls between
// the model activity and the tool activity (CallArguments), and the
// operators' inbox of secret_request (Request). See
// docs/adr/0901-agent-secrets.md.
package agentsecrets
