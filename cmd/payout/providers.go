package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
)

func providersCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "providers", "providers [--json]")
	jsonOut := fs.Bool("json", false, "print a JSON array of {payout_provider_id, name}")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit of the request")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(e.getenv)
	if err != nil {
		return configError(err)
	}
	if err := cfg.validateService(); err != nil {
		return configError(err)
	}
	client, err := api.NewClient(api.Config{BaseURL: cfg.BaseURL, AuthToken: cfg.AuthToken, Timeout: *timeout})
	if err != nil {
		return configError(apiConfigError(err))
	}
	list, err := client.ListProviders(ctx)
	if err != nil {
		return &exitError{code: exitAborted, err: explainUnreachable(outcome.ExplainAuth(err), cfg.BaseURL)}
	}
	if *jsonOut {
		if list == nil {
			list = []api.Provider{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME")
	for _, p := range list {
		fmt.Fprintf(tw, "%d\t%s\n", p.ID, p.Name)
	}
	return tw.Flush()
}
