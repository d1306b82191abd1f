package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/payout/payout/api"
)

// maxProvidersFile bounds a saved provider list: the service lists banks, not millions of rows.
const maxProvidersFile = 4 << 20

// errSavedProvidersOnly is what a plan read from a saved provider list answers any call that
// would reach the service: such a plan sends nothing.
var errSavedProvidersOnly = errors.New("a plan read with --providers never calls the service")

// savedProviders serves a provider list saved by `payout providers --json`, so that a signer
// computes a file's plan without the merchant's token (which stays with the service account).
type savedProviders []api.Provider

func loadSavedProviders(path string) (savedProviders, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError("--providers: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProvidersFile+1))
	if err != nil {
		return nil, usageError("--providers %s: %v", path, err)
	}
	if len(data) > maxProvidersFile {
		return nil, usageError("--providers %s: larger than %d bytes: not a provider list", path, maxProvidersFile)
	}
	var list []api.Provider
	if err := json.Unmarshal(data, &list); err != nil || len(list) == 0 {
		why := "an empty list"
		if err != nil {
			why = err.Error()
		}
		return nil, usageError("--providers %s: %s: want the JSON that `payout providers --json` prints", path, why)
	}
	return list, nil
}

func (s savedProviders) ListProviders(context.Context) ([]api.Provider, error) { return s, nil }

func (s savedProviders) CreatePayout(context.Context, api.CreatePayoutRequest) (api.CreateResult, error) {
	return api.CreateResult{}, fmt.Errorf("create payout: %w", errSavedProvidersOnly)
}

func (s savedProviders) GetPayout(context.Context, string) (api.Payout, error) {
	return api.Payout{}, fmt.Errorf("look up payout: %w", errSavedProvidersOnly)
}
