package report

import (
	"html/template"
	"math/rand"
	"strings"
	"testing"
)

// TestRowHTMLLikeTemplate checks that writeRowHTML writes what the run template wrote per row
// before rows were rendered in Go, byte for byte, escaping included.
func TestRowHTMLLikeTemplate(t *testing.T) {
	old := template.Must(template.New("x").Parse(`<tr{{if .Attention}} class="attention"{{end}}><td class="num">{{.Line}}</td><td class="code">{{.Ref}}</td><td>{{.Recipient}}</td><td class="num">{{.Provider}}</td><td>{{.Bank}}</td><td class="code">{{.Account}}</td><td class="num">{{.Amount}}</td><td class="state s-{{.Class}}">{{.State}}</td><td class="code">{{.InvoiceNo}}</td><td>{{.TransactionStatus}}</td><td class="msg">{{.Message}}</td></tr>`))
	alpha := []string{"a", "<", ">", "&", "'", "\"", "+", "\x00", "\xff", "é", "\ufdd0", "\uffff", "=", "`", " ", "\n", "&amp;"}
	rnd := rand.New(rand.NewSource(1))
	str := func() string {
		var b strings.Builder
		for i := rnd.Intn(8); i > 0; i-- {
			b.WriteString(alpha[rnd.Intn(len(alpha))])
		}
		return b.String()
	}
	for i := 0; i < 20000; i++ {
		r := rowView{Line: str(), Ref: str(), Recipient: str(), Provider: str(), Bank: str(), Account: str(), Amount: str(),
			State: str(), Class: "ok", InvoiceNo: str(), TransactionStatus: str(), Message: str(), Attention: i%2 == 0}
		var a strings.Builder
		if err := old.Execute(&a, r); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		writeRowHTML(&b, r)
		if "\n"+a.String() != b.String() {
			t.Fatalf("differ:\n%q\n%q", a.String(), b.String())
		}
	}
}
