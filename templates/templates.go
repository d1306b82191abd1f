// Package templates holds the HTML templates of the reports, embedded in the binary and parsed
// once. The templates expect fully formatted data (strings) and define no functions.
package templates

import (
	"embed"
	"html/template"
)

//go:embed *.html
var files embed.FS

// all holds every page and the shared partials (the CSS and the summary blocks of partials.html).
var all = template.Must(template.New("").ParseFS(files, "*.html"))

// Names of the pages among the embedded templates.
const (
	RunPage       = "run.html"
	ReconcilePage = "reconcile.html"
)

// Run returns the template of a run's HTML report.
func Run() *template.Template { return all.Lookup(RunPage) }

// Reconcile returns the template of a reconciliation's HTML report.
func Reconcile() *template.Template { return all.Lookup(ReconcilePage) }
