// Ceiling: a bare Express 5 app answering a small JSON body to every request.
// Started as a child process by bench/ceilings.ts; prints "LISTENING <port>" once bound.
import express from 'express';

const app = express();
app.disable('x-powered-by');
// The POST rows send a small urlencoded form: parse it, like the provider must.
app.use(express.urlencoded({ extended: false }));
app.all('/{*splat}', (_req, res) => {
  res.json({ ok: true });
});
const server = app.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  console.log(`LISTENING ${server.address().port}`);
});
server.keepAliveTimeout = 65_000;
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', () => process.exit(0));
