// autocannon, with latency taken from every 2xx response.
import autocannon from 'autocannon';
import { Histogram } from './histogram.mjs';

/** One autocannon run; latency is taken from every 2xx response, in µs, not autocannon's ms. */
export function cannon({ port, urlPath, token, seconds, connections }) {
  return new Promise((resolve, reject) => {
    const latency = new Histogram();
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}${urlPath}`,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        connections,
        pipelining: 1,
        duration: seconds,
      },
      (error, result) => {
        if (error) reject(error);
        else resolve({ result, latency });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) latency.record(responseTimeMs * 1000);
    });
  });
}
