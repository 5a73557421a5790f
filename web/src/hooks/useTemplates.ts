import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData } from '../api/types';

export const TEMPLATES_KEY = ['templates'] as const;
const templateKey = (id: string) => ['templates', id] as const;

export type TemplateSummary = AnswerData<'/api/templates', 'get'>[number];
export type Template = AnswerData<'/api/templates/{id}', 'get'>;
export type TemplateVariable = Template['variables'][number];

/** Every template (anyone signed in may read them). */
export function useTemplates() {
  const { api } = useServices();
  return useQuery({
    queryKey: TEMPLATES_KEY,
    queryFn: async () => unwrapData(api.GET('/api/templates')),
  });
}

/** One template in full (a user sees only its viewable variables); nothing while `id` is null. */
export function useTemplate(id: string | null) {
  const { api } = useServices();
  return useQuery({
    queryKey: templateKey(id ?? ''),
    enabled: id !== null,
    queryFn: async () =>
      unwrapData(api.GET('/api/templates/{id}', { params: { path: { id: id ?? '' } } })),
  });
}

/**
 * The media type an egg's text is sent as: JSON when it is JSON, else its YAML text as is. A
 * text that only looks like JSON goes as YAML too, so the egg parser's message (naming `$`)
 * answers it, not the body parser's.
 */
export function eggContentType(text: string): 'application/json' | 'application/yaml' {
  try {
    JSON.parse(text);
    return 'application/json';
  } catch {
    return 'application/yaml';
  }
}

/** Imports an egg from its text (admin); the answer carries the import's warnings. */
export function useImportTemplate() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (text: string) =>
      unwrapData(
        api.POST('/api/templates/import', {
          body: text,
          // The text goes as it is: the API reads JSON and YAML eggs itself.
          bodySerializer: (body: unknown) => String(body),
          headers: { 'Content-Type': eggContentType(text) },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: TEMPLATES_KEY }),
  });
}

/** Deletes a template (admin); 409 naming the servers made from it. */
export function useDeleteTemplate(id: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/templates/{id}', { params: { path: { id } } })),
    onSuccess: async () => {
      queries.removeQueries({ queryKey: templateKey(id) });
      await queries.invalidateQueries({ queryKey: TEMPLATES_KEY });
    },
  });
}
