import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { ImageBody, ImageChoiceEnvelope } from './server-features.schemas.js';
import type { ServerFeaturesService } from './server-features.service.js';
import { ServerParams, StatusEnvelope } from './servers.schemas.js';

/** What a server's egg features let its users do (docs/api.md, "Egg features"). */
export function serverFeaturesRoutes(app: App, features: ServerFeaturesService): void {
  app.post(
    '/api/servers/:server/eula',
    {
      schema: {
        tags: ['servers'],
        summary: 'Accept the Minecraft EULA: write eula=true into eula.txt, then start the server',
        description:
          'Needs `files.write` and `power`, and a template with the `eula` feature (409 otherwise). A stopped or crashed server is started and the answer is its status; a refused start (409 NOT_INSTALLED, PORT_IN_USE…) is the answer then, with eula.txt written. A server that runs is not restarted. The console socket\'s `notice` frame with `feature: "eula"` says when the game asks for it.',
        params: ServerParams,
        response: responses(StatusEnvelope, 400, 401, 403, 404, 409, 413, 503, 507),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await features.acceptEula(currentUser(request), server);
      return {
        message:
          status === 'starting' || status === 'running'
            ? 'EULA accepted; the server is starting'
            : 'EULA accepted',
        data: { name: server, status },
      };
    },
  );

  app.get(
    '/api/servers/:server/image',
    {
      schema: {
        tags: ['servers'],
        summary: "The server's image and the images its template offers (`settings`)",
        params: ServerParams,
        response: responses(ImageChoiceEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server image',
      data: await features.imageChoice(currentUser(request), request.params.server),
    }),
  );

  app.put(
    '/api/servers/:server/image',
    {
      schema: {
        tags: ['servers'],
        summary:
          "Choose one of the template's images (`settings`); it takes effect at the next start",
        description:
          "400 for an image the template does not offer; 409 for a server without a template or that runs as a process; 403 when an admin set an image outside the template's list (only an admin changes it then, with PUT …/config, which takes any image).",
        params: ServerParams,
        body: ImageBody,
        response: responses(ImageChoiceEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Server image saved; it takes effect at the next start',
      data: await features.chooseImage(
        currentUser(request),
        request.params.server,
        request.body.image,
      ),
    }),
  );
}
