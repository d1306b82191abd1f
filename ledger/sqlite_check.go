package ledger

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The checks of a ledger opened for paying cost the same at any size: the file's header, its
// length against the header's page count, and the schema (checkSchema). Every connection also
// runs with cell_size_check, so that SQLite checks each cell of each page it reads: damage on a
// page that a run or a reconciliation reads (the payouts it looks up, the index of pending
// payouts) stops it with ErrDamaged, and a page that it never reads cannot hide anything from it.
// VerifyChain's quick_check reads the whole file, for an audit.

// headerSize is the SQLite file header: the first 100 bytes of page 1.
const headerSize = 100

// checkFile refuses a ledger whose SQLite header is malformed, or whose file is shorter than the
// pages its header counts (a copy cut short). A file with a write-ahead log is not measured: its
// latest pages may still be in the log, and SQLite's recovery replays them.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, headerSize)
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return refuse(path, ErrDamaged, "the file is shorter than a SQLite header")
		}
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	pageSize, pages, err := parseHeader(head)
	if err != nil {
		return refuse(path, ErrDamaged, "bad SQLite header: "+err.Error())
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	if walInUse(path) || pages == 0 {
		return nil
	}
	if want := int64(pages) * int64(pageSize); fi.Size() < want {
		return refuse(path, ErrDamaged, fmt.Sprintf("the file is %d bytes, and its header counts %d pages of %d bytes (%d bytes): it was cut short, as a copy that did not finish is",
			fi.Size(), pages, pageSize, want))
	}
	return nil
}

// parseHeader reads the page size and, when the header vouches for it, the page count of a
// SQLite file header; pages is 0 when the header leaves the count to the file's size.
func parseHeader(h []byte) (pageSize int, pages uint32, err error) {
	if string(h[:len(sqliteMagic)]) != sqliteMagic {
		return 0, 0, errors.New("no SQLite signature")
	}
	pageSize = int(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return 0, 0, fmt.Errorf("page size %d", pageSize)
	}
	if w, r := h[18], h[19]; w < 1 || w > 2 || r < 1 || r > 2 {
		return 0, 0, fmt.Errorf("file format versions %d and %d", w, r)
	}
	if h[21] != 64 || h[22] != 32 || h[23] != 32 {
		return 0, 0, fmt.Errorf("payload fractions %d, %d, %d", h[21], h[22], h[23])
	}
	// The count is valid only when written by the same change as the change counter.
	if changes, validFor := binary.BigEndian.Uint32(h[24:28]), binary.BigEndian.Uint32(h[92:96]); changes == validFor {
		pages = binary.BigEndian.Uint32(h[28:32])
	}
	return pageSize, pages, nil
}

// walInUse reports a write-ahead log holding frames beside path.
func walInUse(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// Damaged reports whether err is SQLite finding the ledger's file damaged, when it was opened
// or later, on a page a query read.
func Damaged(err error) bool {
	if errors.Is(err, ErrDamaged) {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CORRUPT
}

// damaged turns an error that SQLite gives for a damaged file into a finding: the check ends
// there, and what it found is that the file is damaged. Other errors pass unchanged.
func damaged(rep ChainReport, err error) (ChainReport, error) {
	if !errors.Is(classify("", err), ErrDamaged) {
		return rep, err
	}
	rep.Findings = append(rep.Findings, Finding{Problem: "the file is damaged, the check stopped: " + err.Error()})
	return rep, nil
}

func quickCheckFindings(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	lines, err := scanAll(ctx, conn, `PRAGMA quick_check`, func(s scanner) (string, error) {
		var line string
		return line, s.Scan(&line)
	})
	if err != nil {
		return fmt.Errorf("verify: quick_check: %w", err)
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil
	}
	for _, l := range lines {
		rep.Findings = append(rep.Findings, Finding{Problem: "the file is damaged: quick_check: " + l})
	}
	return nil
}
