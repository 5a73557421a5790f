import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { SelectField } from '../../../components/Field';
import { useChooseImage, useImageChoice } from '../../../hooks/useServerFeatures';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

/**
 * For a server run in a container from a template with several images (an egg's Java versions):
 * whoever holds `settings` chooses among them (`PUT …/image`); it takes effect at the next start.
 * An image an admin set outside the template's list is said to be theirs to change. Nothing for a
 * template with one image, or a server that runs as a process.
 */
export function ImageChoice({ server, onChosen }: { server: string; onChosen: () => void }) {
  const choice = useImageChoice(server);
  const save = useChooseImage(server);
  const [picked, setPicked] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const data = choice.data;
  if (choice.isError) {
    return (
      <section className={page.card} aria-labelledby="image-title">
        <h2 id="image-title">Container image</h2>
        <Alert tone="error">{errorMessage(choice.error)}</Alert>
      </section>
    );
  }
  if (data === undefined) {
    return (
      <section className={page.card} aria-labelledby="image-title">
        <h2 id="image-title">Container image</h2>
        <p className={page.muted} role="status">
          Loading the images…
        </p>
      </section>
    );
  }
  if (data.runtime !== 'docker' || data.images.length < 2) return null;

  const selected = picked ?? data.image ?? '';
  const listed = data.images.some((image) => image.image === data.image);
  const options = [
    // An image an admin set outside the template's list is shown as the current one.
    ...(listed || data.image === null
      ? []
      : [{ value: data.image, label: `${data.image} (set by an admin)` }]),
    ...data.images.map((image) => ({
      value: image.image,
      label: image.name === image.image ? image.image : `${image.name} (${image.image})`,
    })),
  ];
  const fieldError =
    save.error instanceof ApiError && save.error.status === 400
      ? errorMessage(save.error)
      : undefined;
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setSaved(false);
    save.mutate(selected, {
      onSuccess: () => {
        setPicked(null);
        setSaved(true);
        onChosen();
      },
    });
  };

  return (
    <section className={page.card} aria-labelledby="image-title">
      <h2 id="image-title">Container image</h2>
      <form className={styles.confirm} onSubmit={submit} noValidate>
        <p className={page.muted}>
          The images the server&apos;s template offers, such as Java versions. A change takes effect
          the next time the server starts.
        </p>
        <SelectField
          label="Image of the template"
          name="templateImage"
          options={options}
          value={selected}
          disabled={!data.choosable || save.isPending}
          error={fieldError}
          hint={data.reason ?? undefined}
          onChange={(event) => {
            setSaved(false);
            save.reset();
            setPicked(event.target.value);
          }}
        />
        {save.isError && fieldError === undefined && (
          <Alert tone="error">{errorMessage(save.error)}</Alert>
        )}
        {saved && <Alert tone="success">Image saved: it takes effect at the next start</Alert>}
        {data.choosable && (
          <div>
            <button
              type="submit"
              className="button primary"
              disabled={selected === data.image || save.isPending}
            >
              {save.isPending ? 'Saving…' : 'Use this image'}
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
