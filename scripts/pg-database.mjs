#!/usr/bin/env node
// Creates or drops a PostgreSQL database, for CI's run against a fresh database:
//   node scripts/pg-database.mjs create|drop <server URL> <database name>
// The server URL names any database the user can connect to (e.g. .../test).
import pg from 'pg';

const [action, url, name] = process.argv.slice(2);
if (!['create', 'drop'].includes(action ?? '') || !url || !/^[a-z_][a-z0-9_]*$/.test(name ?? '')) {
  console.error('usage: pg-database.mjs create|drop <server URL> <database name>');
  process.exit(2);
}
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  await client.query(
    action === 'create'
      ? `create database ${name}`
      : `drop database if exists ${name} with (force)`,
  );
} finally {
  await client.end();
}
