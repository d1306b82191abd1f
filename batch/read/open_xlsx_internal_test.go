package read

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

func saveWorkbook(tb testing.TB, path string, ref string) {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	header := []any{ColRef, ColRecipient, ColBank, ColAccount, ColAmount}
	if err := f.SetSheetRow("Sheet1", "A1", &header); err != nil {
		tb.Fatal(err)
	}
	row := []any{ref, "Tan Wei Ming", "Maybank", "0123456789", 10}
	if err := f.SetSheetRow("Sheet1", "A2", &row); err != nil {
		tb.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		tb.Fatal(err)
	}
}

// The scanner reads the workbook that was opened and checked, and excelize reads it again by
// its path: a path that names another file by then, or the same file rewritten, is refused, so
// that the two never read different workbooks.
func TestXLSXChangedWhileOpenedIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "pay.xlsx")
	for name, change := range map[string]func(){
		"replaced": func() {
			other := filepath.Join(dir, "other.xlsx")
			saveWorkbook(t, other, "OTHER-1")
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		},
		"rewritten": func() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("more")); err != nil {
				t.Fatal(err)
			}
			f.Close()
		},
	} {
		saveWorkbook(t, path, "PAY-1")
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		opened, err := file.Stat()
		if err != nil {
			t.Fatal(err)
		}
		change()
		x, err := newXLSXReader(file, opened, path, Options{})
		if !errors.Is(err, ErrChangedWhileOpened) {
			t.Errorf("%s: got %v, want %v", name, err, ErrChangedWhileOpened)
		}
		if x != nil {
			x.Close()
		} else {
			file.Close()
		}
	}
}
