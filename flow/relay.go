package flow

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// ChannelAsk relays one question to the HumanChannel listening on socket
// and returns the person's answer (State "answered", "timeout", …). It is
// the ask tool of `flower mcp-channel`, which claude starts for a step.
func ChannelAsk(ctx context.Context, socket string, q Question) (Answer, error) {
	var resp relayResponse
	if err := relay(ctx, socket, relayRequest{Op: "ask", Question: q}, &resp); err != nil {
		return Answer{}, err
	}
	if resp.Error != "" && resp.State == "" {
		return Answer{}, errors.New(resp.Error)
	}
	return resp.Answer, nil
}

// ChannelInbox takes one page of the messages told to the flow whose
// HumanChannel listens on socket; left counts those still waiting.
func ChannelInbox(ctx context.Context, socket string) (msgs []string, left int, err error) {
	var resp relayResponse
	if err := relay(ctx, socket, relayRequest{Op: "inbox"}, &resp); err != nil {
		return nil, 0, err
	}
	return resp.Messages, resp.Left, nil
}

// relay sends one request line to the channel socket and reads one answer.
func relay(ctx context.Context, socket string, req relayRequest, resp *relayResponse) error {
	if socket == "" {
		return fmt.Errorf("%s is not set", ChannelSocketEnv)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "unix", socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, resp)
}
