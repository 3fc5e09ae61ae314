package githubinstall

// Registered activity names: stable strings, never Go method names
// (docs/adr/0605-activity-names.md).
const (
	AuthorizeName = "githubinstall.authorize"
	ChooseName    = "githubinstall.choose"
	FinishName    = "githubinstall.finish"
	AbandonName   = "githubinstall.abandon"
	ReleaseName   = "githubinstall.release"
)

// Error types of non-retryable failures.
const (
	ErrTypeRefused  = "github_refused"        // GitHub or the user's reach refused the login
	ErrTypeInternal = "github_internal"       // a sealed callback that cannot be opened
	ErrTypeSetup    = "github_setup"          // the box's App is not usable
	ErrTypeApproval = "github_needs_approval" // attached to another organisation: an instance admin approves first
)
