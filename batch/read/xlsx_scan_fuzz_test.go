package read

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzSheetScanner: whatever the XML, the scanner never panics, ends, and gives the facts of
// rows in order; a row's facts come from its own cells only.
func FuzzSheetScanner(f *testing.F) {
	for _, s := range []string{
		`<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="D2"><v>12</v></c><c r="E2"><f>G2+H2</f><v>1</v></c></row></sheetData>`,
		`<x:sheetData><x:row><x:c t='n'><x:v>1</x:v></x:c></x:row><x:row r="9" hidden="1"><x:c r="A9"/></x:row></x:sheetData>`,
		`<row r="3"><c r="A3" t="inlineStr"><is><t><![CDATA[<row r="4">]]></t></is></c><!-- <f> --></row>`,
		`<row r="2"></row><row r="1"></row>`,
		`<row r = "1" ><c r = 'D1' ><v>1</v></c></row>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scan := &sheetScanner{xmlScan: xmlScan{br: bufio.NewReaderSize(bytes.NewReader([]byte(s)), 64<<10)}, rc: io.NopCloser(nil), slot: -1,
			track: [slots]int{1, 2, 3, 4, 5}}
		for line := 1; line <= 50; line++ {
			facts, err := scan.through(line)
			if err != nil {
				return
			}
			if scan.row < line && !scan.done {
				t.Fatalf("line %d: the scanner stopped at row %d before the end", line, scan.row)
			}
			_ = facts
		}
	})
}
