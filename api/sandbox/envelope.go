package sandbox

import (
	"encoding/json"
	"net/http"
	"strconv"
)

type envelope struct {
	Status  string  `json:"status"`
	Code    int     `json:"code"`
	Data    any     `json:"data"`
	UUID    string  `json:"uuid"`
	Message *string `json:"message"`
	Error   *string `json:"error"`
}

func (s *Server) write(w http.ResponseWriter, httpStatus int, env envelope) {
	b, err := json.Marshal(env)
	if err != nil {
		s.log.Error("sandbox: encode response", "err", err)
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(httpStatus)
	_, _ = w.Write(b)
}

func (s *Server) ok(w http.ResponseWriter, uuid string, code int, data any) {
	s.write(w, http.StatusOK, envelope{Status: "ok", Code: code, Data: data, UUID: uuid})
}

func (s *Server) fail(w http.ResponseWriter, uuid string, httpStatus, code int, msg, detail string) {
	env := envelope{Status: "fail", Code: code, UUID: uuid, Message: &msg}
	if detail != "" {
		env.Error = &detail
	}
	s.write(w, httpStatus, env)
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, uuid, allow string) {
	w.Header().Set("Allow", allow)
	s.fail(w, uuid, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed", "")
}
