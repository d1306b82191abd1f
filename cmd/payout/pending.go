package main

import (
	"context"
	"errors"
)

func reconcileCmd(context.Context, *env, []string) error {
	return &exitError{code: exitUsage, err: errors.New("reconcile: not built yet")}
}
