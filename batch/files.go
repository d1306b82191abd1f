package batch

import (
	"context"
	"log/slog"
)

// FileKeeper keeps other processes off the files a process is paying (ledger.Hold is one).
type FileKeeper interface {
	PayFile(ctx context.Context, fileSHA256 string) error
	DonePaying(ctx context.Context, fileSHA256 string) error
	// OthersPay reports whether another process is paying the file now.
	OthersPay(ctx context.Context, fileSHA256 string) (bool, error)
}

// takeFile keeps other processes off the file a run pays (Config.Files), before anything of it
// is recorded or sent; the returned func lets them pay it again, once the run has ended.
func (r *Runner) takeFile(ctx context.Context, log *slog.Logger, fileSHA256 string) (func(), error) {
	files := r.cfg.Files
	if files == nil || r.cfg.DryRun {
		return func() {}, nil
	}
	if err := files.PayFile(ctx, fileSHA256); err != nil {
		return nil, err
	}
	return func() {
		if err := files.DonePaying(context.WithoutCancel(ctx), fileSHA256); err != nil {
			log.Warn("other processes are kept off the file until this one ends", "err", err)
		}
	}, nil
}
