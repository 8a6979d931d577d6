/**
 * The new project's assets on the project page (issue 24 item 5): each can be renamed (the name
 * it gets in the project) or removed; a file added under a name already in the list replaces
 * that asset instead of making two of one name (which saving would refuse); a rename to a name
 * another asset has is refused in place, keeping the old name.
 */
import { formatSize, t } from '../i18n/index.js';
import { el } from './dom.js';

/** One asset: the name it gets in the project, and its file. */
export interface PickedAsset { name: string; file: File }

/** The assets being put together, drawn into `target` whenever they change. */
export class AssetList {
  readonly items: PickedAsset[] = [];

  constructor(private readonly target: HTMLElement) {
    this.draw();
  }

  /** Adds files; one whose name is taken replaces that asset. */
  add(files: Iterable<File>): void {
    for (const file of files) {
      const same = this.items.find((a) => a.name === file.name);
      if (same !== undefined) same.file = file;
      else this.items.push({ name: file.name, file });
    }
    this.draw();
  }

  private draw(): void {
    if (this.items.length === 0) {
      this.target.replaceChildren(el('p', { class: 'meta' }, t('project.noAssets')));
      return;
    }
    this.target.replaceChildren(el('ul', { class: 'asset-list' }, this.items.map((asset) => this.row(asset))));
  }

  private row(asset: PickedAsset): HTMLElement {
    const message = el('span', { class: 'field-error', role: 'alert' });
    const input = el('input', { type: 'text', value: asset.name, 'aria-label': t('project.assetName', { name: asset.name }), maxlength: 200,
      onchange: () => {
        const wanted = input.value.trim();
        if (wanted === '' || this.items.some((other) => other !== asset && other.name === wanted)) {
          message.textContent = t(wanted === '' ? 'project.assetNameEmpty' : 'project.assetNameTaken', { name: wanted });
          input.value = asset.name;
          return;
        }
        asset.name = wanted;
        this.draw();
      } });
    const remove = el('button', { type: 'button', class: 'secondary small', 'aria-label': t('project.removeAsset', { name: asset.name }),
      onclick: () => {
        this.items.splice(this.items.indexOf(asset), 1);
        this.draw();
      } }, t('project.remove'));
    return el('li', { dataset: { asset: asset.name } }, input, el('span', { class: 'meta' }, formatSize(asset.file.size)), remove, message);
  }
}
