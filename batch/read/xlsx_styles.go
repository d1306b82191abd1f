package read

import (
	"archive/zip"
	"errors"
	"fmt"
	"strings"
)

// Reasons a cell in a paid column is rejected for what the workbook makes of its number: the
// stored value is not what the user sees, so paying it would pay something nobody typed.
var (
	ErrCellBoolean = errors.New("cell holds TRUE or FALSE, stored as 1 or 0: type the value")
	ErrCellDate    = errors.New("cell is a date or time, stored as a day count: type the value and format the cell as Number or Text")
	ErrCellPercent = errors.New("cell is formatted as a percentage (50% is stored as 0.5): type the value and format the cell as Number or Text")
)

// cellShown is what a cell's type and number format make of its stored value.
type cellShown uint8

const (
	shownPlain cellShown = iota
	shownBoolean
	shownDate
	shownPercent
)

func (k cellShown) err() error {
	switch k {
	case shownBoolean:
		return ErrCellBoolean
	case shownDate:
		return ErrCellDate
	case shownPercent:
		return ErrCellPercent
	}
	return nil
}

// numberStyles maps a cell's style index (its s attribute) to what the style's number format
// shows a number as, and to the format's code; indexes not listed show a number plainly, as
// General does.
type numberStyles struct {
	shown map[int]cellShown
	codes map[int]string
}

// readNumberStyles reads xl/styles.xml: each cell format's number format, built in or custom.
// A workbook without styles has only plain numbers.
func readNumberStyles(zr *zip.Reader) (numberStyles, error) {
	var styles struct {
		NumFmts []struct {
			ID   int    `xml:"numFmtId,attr"`
			Code string `xml:"formatCode,attr"`
		} `xml:"numFmts>numFmt"`
		CellXfs []struct {
			NumFmtID int `xml:"numFmtId,attr"`
		} `xml:"cellXfs>xf"`
	}
	if !hasZipPart(zr, "xl/styles.xml") {
		return numberStyles{}, nil
	}
	if err := readZipXML(zr, "xl/styles.xml", &styles); err != nil {
		return numberStyles{}, fmt.Errorf("xl/styles.xml: %v", err)
	}
	custom := make(map[int]cellShown, len(styles.NumFmts))
	customCodes := make(map[int]string, len(styles.NumFmts))
	for _, f := range styles.NumFmts {
		custom[f.ID], customCodes[f.ID] = formatShows(f.Code), f.Code
	}
	out := numberStyles{shown: map[int]cellShown{}, codes: map[int]string{}}
	for i, xf := range styles.CellXfs {
		shown, ok := custom[xf.NumFmtID]
		code := customCodes[xf.NumFmtID]
		if !ok {
			shown, code = builtinFormatShows(xf.NumFmtID), builtinFormatCodes[xf.NumFmtID]
		}
		if shown != shownPlain {
			out.shown[i] = shown
		}
		if code != "" && !strings.EqualFold(code, "general") {
			out.codes[i] = code
		}
	}
	return out, nil
}

func hasZipPart(zr *zip.Reader, name string) bool {
	for _, f := range zr.File {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// builtinFormatShows classifies the number formats a spreadsheet knows by id alone: 9 and 10 are
// percentages; 14–22, 27–36, 45–47 and 50–58 dates and times (some only in East Asian locales).
func builtinFormatShows(id int) cellShown {
	switch {
	case id == 9 || id == 10:
		return shownPercent
	case id >= 14 && id <= 22, id >= 27 && id <= 36, id >= 45 && id <= 47, id >= 50 && id <= 58:
		return shownDate
	}
	return shownPlain
}

// formatShows classifies a format code by its placeholders, outside quoted text, escaped
// characters and brackets ([Red], [$RM-43E]; [h] and [mm] of elapsed time count as a time). The
// general format's names hold d and s but show a plain number.
func formatShows(code string) cellShown {
	code = strings.NewReplacer("general", "", "standard", "").Replace(strings.ToLower(code))
	percent := false
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				i = len(code)
			}
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				return shownPlain
			}
			if inner := strings.ToLower(code[i+1 : i+j]); inner != "" && strings.Trim(inner, "hms") == "" {
				return shownDate
			}
			i += j
		case '%':
			percent = true
		default:
			if strings.IndexByte("dmyhs", c) >= 0 {
				return shownDate
			}
		}
	}
	if percent {
		return shownPercent
	}
	return shownPlain
}
