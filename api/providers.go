package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// ListProviders returns the payout providers. If data.list.record_total says there are more
// providers than the first answer holds, it asks for the following pages (DataTables style:
// draw, start, length, page in a JSON body) and stops as soon as a page adds no new provider, a
// follow-up page fails, or MaxProviderPages is reached. A service that ignores page parameters
// therefore costs one extra request, never a loop.
func (c *Client) ListProviders(ctx context.Context) ([]Provider, error) {
	const op = "list providers"
	page, err := c.providerPage(ctx, op, nil)
	if err != nil {
		return nil, err
	}
	out := page.providers
	seen := make(map[Provider]bool, len(out))
	for _, p := range out {
		seen[p] = true
	}
	pageSize := len(page.providers)
	draw := page.draw
	for n := 2; n <= MaxProviderPages && page.total > len(out) && pageSize > 0; n++ {
		draw++
		body, _ := json.Marshal(map[string]int{"draw": draw, "start": len(out), "length": pageSize, "page": n})
		next, err := c.providerPage(ctx, op, body)
		if err != nil {
			// The service documents no paging; a refusal of page parameters means it has none.
			break
		}
		added := 0
		for _, p := range next.providers {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
				added++
			}
		}
		if added == 0 {
			break
		}
	}
	return out, nil
}

type providerPage struct {
	providers []Provider
	total     int
	draw      int
}

func (c *Client) providerPage(ctx context.Context, op string, body []byte) (providerPage, error) {
	res, err := c.do(ctx, request{op: op, method: http.MethodPost, path: PathListProviders, body: body})
	if err != nil {
		return providerPage{}, err
	}
	page, err := decodeProviders(res.env.Data)
	if err != nil {
		return providerPage{}, &Error{Op: op, HTTPStatus: res.status, Code: int(res.env.Code.N),
			Status: c.clean(string(res.env.Status)), UUID: c.clean(string(res.env.UUID)),
			Kind: KindRetryable, Err: err}
	}
	return page, nil
}

// decodeProviders accepts data.list.data (documented), data.list as an array, or data as an
// array.
func decodeProviders(data json.RawMessage) (providerPage, error) {
	t := bytes.TrimSpace(data)
	if isNull(t) {
		return providerPage{}, fmt.Errorf("%w: %w", ErrBadResponse, errNoData)
	}
	if t[0] == '[' {
		var ps []Provider
		if err := json.Unmarshal(t, &ps); err != nil {
			return providerPage{}, fmt.Errorf("%w: providers: %v", ErrBadResponse, err)
		}
		return providerPage{providers: ps, total: len(ps)}, nil
	}
	var d struct {
		List json.RawMessage `json:"list"`
	}
	if err := json.Unmarshal(t, &d); err != nil {
		return providerPage{}, fmt.Errorf("%w: providers: %v", ErrBadResponse, err)
	}
	l := bytes.TrimSpace(d.List)
	if isNull(l) {
		return providerPage{}, fmt.Errorf("%w: no data.list", ErrBadResponse)
	}
	if l[0] == '[' {
		return decodeProviders(l)
	}
	var list struct {
		Draw        flexInt         `json:"draw"`
		RecordTotal flexInt         `json:"record_total"`
		Data        json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(l, &list); err != nil {
		return providerPage{}, fmt.Errorf("%w: data.list: %v", ErrBadResponse, err)
	}
	var ps []Provider
	if !isNull(list.Data) {
		if err := json.Unmarshal(list.Data, &ps); err != nil {
			return providerPage{}, fmt.Errorf("%w: data.list.data: %v", ErrBadResponse, err)
		}
	}
	return providerPage{providers: ps, total: int(list.RecordTotal.N), draw: int(list.Draw.N)}, nil
}
