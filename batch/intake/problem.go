package intake

// MaxProblems bounds a run's problems and warnings, so that a wrong file does not flood a terminal or a log.
const MaxProblems = 50

// Problem is one rejection as a person fixes it: where, what, why.
type Problem struct {
	Line   int    `json:"line"`
	Column string `json:"column"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
}
