// Package api is the client of the Merchant Payout Service: its wire types, the response
// envelope, the classification of its errors and the verification of its signed callbacks.
//
// # The service's interface
//
// Every endpoint is under the base URL and begins with /api/v1/ (PathListProviders, PathPayout):
// another version of the interface is a change in this package only. Every request carries the
// merchant's token in the auth-token header, and every answer is a JSON envelope with status
// ("ok" or "fail"), code, data, uuid, message and error. Amounts are MYR.
//
//   - List Payout Providers: POST, no body. data.list.data holds the providers
//     (payout_provider_id and name); a payout's payout_service_id is a provider's id.
//   - Create Payout: POST with a JSON body of virtual_pool_reference, payout_service_id, amount,
//     client_redirect_url, client_callback_url, third_party_account_no, recipient_reference,
//     payment_description and external_invoice_ref, the merchant's own reference.
//   - Get Payout: GET .../payout/{reference}, where reference is the service's payout_invoice_no
//     or the merchant's external_invoice_ref. data is the payout: value, external_invoice_ref,
//     payout_invoice_no, payout_account_number, created_at and transaction_status, one of
//     SUCCESS, FAILED and PENDING.
//   - Callback: after a successful payout the service POSTs {"data": JWT, "response_code": N} to
//     client_callback_url; the JWT, signed with the merchant's hash key, carries the payout's
//     invoice_no, invoice_status (SUCCESS with invoice_status_id 2), amount, bank_reference_no
//     and more.
//
// # Where the interface says nothing
//
// The interface leaves much unsaid. Where it does, the client takes the reading that can never
// pay twice nor lose a payout, and tolerates what a service might plausibly send:
//
//   - Success: status "ok", or code 200 or 2000 (both appear as success codes), with an HTTP 2xx.
//     status "fail" is a failure. An envelope that contradicts itself ("fail" with code 200) or
//     says neither (an unknown code alone, no envelope, not JSON) is ambiguous: on Create Payout
//     its outcome is unknown (KindOutcomeUnknown) and the payout is looked up by
//     external_invoice_ref before anything is sent again; on reads it is retried. An unreadable
//     answer is never taken for a refusal, since a refused payout may be sent again.
//   - Create Payout's answer is not described: any success envelope is accepted, and the
//     invoice number is taken from data.payout_invoice_no, data.invoice_no or data.payout when
//     present (CreateResult). When it is absent the payout is looked up by its reference.
//   - Amounts go out as a JSON number with exactly two decimals (1250.50); one with more decimals
//     is refused (ErrAmountPrecision), never rounded. Every request field is always sent.
//   - Decoding is tolerant: unknown fields are ignored, numbers may arrive as strings and the
//     other way round, invoice_no stands for payout_invoice_no and amount for value. A documented
//     transaction_status is matched in any case; any other is kept as sent and is not final.
//   - Not found: error codes, HTTP statuses and the answer for an unknown reference are not
//     described, so "not found" (KindNotFound) is read only where it is unambiguous: an HTTP 404
//     with the service's envelope (a code, or status ok or fail), envelope code 404, or a
//     message that says the payout, invoice or reference does not exist. A bare 404 (a proxy, a
//     wrong URL, a web framework's own JSON such as {"detail":"Not Found"}) or a message about
//     the route, the merchant or the token is retried instead, because "not found" can lead to
//     a payout being sent again. A Get Payout answer about another reference, or with an empty
//     data, is no answer either. On Create Payout an HTTP 404 means the endpoint is missing.
//   - Refusals: 401/403 (or a failure about the token) is KindUnauthorized; 409 or a message
//     saying the reference is already used is KindDuplicate; other 4xx are KindRejected.
//   - Provider paging is not described: the list is asked for once without a body, and only when
//     data.list.record_total is larger than what came back are further pages asked for, in the
//     DataTables style (draw, start, length, page in a JSON body). Paging stops when a page adds
//     no new provider, a page fails, or after MaxProviderPages. data.list or data as a bare array
//     is accepted too.
//   - Rate: no limit is assumed. HTTP 429 is KindRateLimited, with Error.RetryAfter read from
//     Retry-After in seconds or as an HTTP date, DefaultRetryAfter when absent or unreadable.
//   - Callbacks' signing algorithm is not named: VerifyCallback accepts HS256, HS384 and HS512
//     and refuses every other (none, asymmetric ones) before checking the signature. The payload
//     may be the token's claims or an object under "data" or "payload"; exp and nbf are enforced
//     only when present. Only invoice_status SUCCESS (in any case) with invoice_status_id 2
//     settles a payout; other values are kept, not applied. display_name is read as the name
//     the bank holds for the account (the callback receiver compares it with the recipient);
//     the orgn_ fields are decoded and kept as text, never compared with the file's rows, since
//     their meaning is not stated.
//
// Texts from the service are cleaned before they reach an error or a log: the token redacted,
// one line, at most 300 characters.
package api
