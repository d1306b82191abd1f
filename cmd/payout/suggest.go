package main

import (
	"flag"
	"strings"
)

// unknownFlag returns the first flag among args (as splitArgs separates them) that fs does not
// define, without its dashes and value, or "" when every flag is known.
func unknownFlag(fs *flag.FlagSet, flags []string) string {
	for i := 0; i < len(flags); i++ {
		name := strings.TrimPrefix(strings.TrimPrefix(flags[i], "-"), "-")
		name, _, hasValue := strings.Cut(name, "=")
		if name == "" || name == "h" || name == "help" {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			return name
		}
		if !hasValue && !isBoolFlag(f) {
			i++ // its value
		}
	}
	return ""
}

// suggestFlag names the defined flag closest to name, a likely typing mistake (--dryrun,
// --dry_run, --Dry-Run, --dry-rn), or "" when none is close enough to be the one meant.
func suggestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if isRefusedFlag(f) {
			return
		}
		d := editDistance(foldFlag(name), foldFlag(f.Name))
		if d < bestDist || (d == bestDist && best == "") {
			best, bestDist = f.Name, d
		}
	})
	if best == "" || bestDist > len(best)/3 {
		return ""
	}
	return best
}

// suggestCommand names the command closest to name, or "" when none is close enough.
func suggestCommand(name string) string {
	best, bestDist := "", 3
	for _, c := range commands() {
		if d := editDistance(strings.ToLower(name), c.name); d < bestDist {
			best, bestDist = c.name, d
		}
	}
	if best == "" || bestDist > len(best)/3 {
		return ""
	}
	return best
}

// foldFlag drops what a mistyped flag name most often gets wrong: case, '-' and '_'.
func foldFlag(name string) string {
	return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
}

// editDistance is the number of single-character insertions, deletions, substitutions and swaps
// of neighbours that turn a into b (optimal string alignment distance).
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
