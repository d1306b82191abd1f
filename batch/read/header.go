package read

import "strings"

// Header is the header row of the file rd reads, names as written (without a byte order mark or
// surrounding spaces) and in file order, up to the last named column; nil for a reader of
// another kind.
func Header(rd Reader) []string {
	if h, ok := rd.(interface{ header() headerMap }); ok {
		return h.header().columnNames()
	}
	return nil
}

func (c *csvReader) header() headerMap  { return c.h }
func (x *xlsxReader) header() headerMap { return x.h }

func (h headerMap) columnNames() []string {
	names := make([]string, 0, h.named)
	for i, name := range h.names[:min(h.named, len(h.names))] {
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		names = append(names, strings.TrimSpace(name))
	}
	return names
}

// IsColumn reports whether a header name means column (one of the Col names, or any other),
// matched as the reader matches them: case aside, spaces and dashes taken for underscores.
func IsColumn(name, column string) bool {
	return normalizeHeader(name) == normalizeHeader(column)
}
