// A placeholder until the page is written: connects to /rpc and shows the player's state.
"use strict";
(function () {
  const status = document.getElementById("status");
  const player = document.getElementById("player");
  const socket = new WebSocket(`ws://${location.host}/rpc`);
  socket.onopen = () => {
    status.textContent = "connected";
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "subscribe", params: { stream: "player" } }));
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.method === "player.state") player.textContent = JSON.stringify(message.params, null, 2);
  };
  socket.onclose = () => { status.textContent = "disconnected"; };
})();
