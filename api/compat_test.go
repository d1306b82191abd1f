package api_test

import (
	"context"
	"testing"

	"github.com/payout/payout/api"
)

// TestClassifyCompat: answers a service written from the same interface might give, where the
// interface is silent on errors. A web framework's own JSON 404 (no envelope) is not "not found",
// since "not found" may lead to a payout being sent again.
func TestClassifyCompat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, op, body string
		status         int
		want           api.Kind
	}{
		{"get fastapi 404", "get", `{"detail":"Not Found"}`, 404, api.KindRetryable},
		{"get spring 404", "get", `{"timestamp":"2026-11-24T06:00:00Z","status":404,"error":"Not Found","path":"/x/api/v1/merchant/payout/P"}`, 404, api.KindRetryable},
		{"get laravel 404", "get", `{"message":"Not Found."}`, 404, api.KindRetryable},
		{"get express 404", "get", `{}`, 404, api.KindRetryable},
		{"get 200 fail code 404 msg", "get", `{"status":"fail","code":404,"data":null,"message":"Payout not found"}`, 200, api.KindNotFound},
		{"get 200 fail invalid ref", "get", `{"status":"fail","code":1234,"data":null,"message":"Invalid reference"}`, 200, api.KindRetryable},
		{"get 401 envelope", "get", `{"status":"fail","code":401,"data":null,"message":"Unauthorized"}`, 401, api.KindUnauthorized},
		{"get 200 fail 401", "get", `{"status":"fail","code":401,"data":null,"message":"Unauthorized"}`, 200, api.KindUnauthorized},
		{"get 200 fail 1234 invalid token", "get", `{"status":"fail","code":1234,"data":null,"message":"Invalid auth-token"}`, 200, api.KindUnauthorized},
		{"create 200 fail 1234 validation", "create", `{"status":"fail","code":1234,"data":null,"message":"The amount field is required."}`, 200, api.KindRejected},
		{"create 422 validation", "create", `{"status":"fail","code":1234,"data":null,"message":"validation error","error":"payout_service_id is invalid"}`, 422, api.KindRejected},
		{"create 404 provider not found env", "create", `{"status":"fail","code":404,"data":null,"message":"Payout provider not found"}`, 404, api.KindNotFound},
		{"create 200 fail 404 provider", "create", `{"status":"fail","code":404,"data":null,"message":"Payout provider not found"}`, 200, api.KindRejected},
		{"create 200 fail 401", "create", `{"status":"fail","code":401,"data":null}`, 200, api.KindUnauthorized},
		{"get 404 envelope status only", "get", `{"status":"fail","data":null,"message":"payout not found"}`, 404, api.KindNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, reply(tt.status, tt.body))
			wantKind(t, call(context.Background(), c, tt.op), tt.want)
		})
	}
}
