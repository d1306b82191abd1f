package ledger

// Kinds of the events the web console appends about people (their ref is empty, like every
// event about the ledger itself).
const (
	// EventConsoleSignIn records a person's sign-in to the web console with a passkey: facts
	// "principal", "fingerprint", "origin".
	EventConsoleSignIn = "CONSOLE-SIGN-IN"
	// EventConsoleSigned records a signature a person made with a passkey in the web console,
	// before it is written beside its file: facts "principal", "fingerprint", "namespace",
	// "file", "file_sha256", "plan_sha256", "sig_file", "sig_sha256". A run counts the file, not
	// this event.
	EventConsoleSigned = "CONSOLE-SIGNED"
	// EventConsoleRepeatsAccepted records that a person accepted, with a passkey in the web
	// console, the rows of a file held as possible repeats: their signature of the file's plan
	// with those rows paid, in namespace payout-repeat, before it is written beside the file. Its
	// facts are EventConsoleSigned's. The person is never one who dropped the file.
	EventConsoleRepeatsAccepted = "CONSOLE-REPEATS-ACCEPTED"
)
