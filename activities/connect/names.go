package connect

// Registered activity names. They are stable strings, not Go method names: a
// method name is aliased by the SDK to whatever name its function was last
// registered under, so the run workflow's "finish" once captured this
// workflow's Finish (docs/adr/0605-activity-names.md).
const (
	PrepareName  = "connect.prepare"
	ExchangeName = "connect.exchange"
	FinishName   = "connect.finish"
	AbandonName  = "connect.abandon"
)

// Legacy names: what connect workflows recorded before the stable names
// scheduled. Kept for replay only; no worker registers them.
const (
	LegacyPrepareName  = "Prepare"
	LegacyExchangeName = "Exchange"
	LegacyFinishName   = "Finish"
	LegacyAbandonName  = "Abandon"
)
